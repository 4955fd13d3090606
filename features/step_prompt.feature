Feature: The step prompt
  The model is offered exactly the agent's tools (plus `finish` or the library's final-answer
  tool), and every step call shows the inputs, the trajectory so far and every tool. A DSPy-shaped
  step also requires the tool args to be a JSON object.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"
    And the tool "search" that returns "Paris is the capital of France."

  @req:STEP-1
  Scenario: The model is offered exactly the agent's tools
    Given the model replies
      | turn  | thought       | tool | args            |
      | final | I know it     |      | {"answer": "4"} |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the tools offered to the model are exactly "add, search"

  @req:STEP-1
  Scenario: An agent without tools is offered none
    Given the agent has no tools
    And the model replies
      | turn  | thought       | tool | args            |
      | final | I know it     |      | {"answer": "4"} |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the tools offered to the model are exactly ""

  @req:STEP-2 @capability:signature
  Scenario: Every step prompt requires next_tool_args to be a JSON object
    Given the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 2, "b": 3} |
      | final | done       | | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then every step call mentions "next_tool_args" and "JSON"

  @req:STEP-3
  Scenario: Every step prompt shows the inputs and each tool's name, description and arguments
    Given the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 2, "b": 3} |
      | final | done       | | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then every step call shows "What is 2 + 3?"
    And every step call shows the tool "add" with its description and its arguments
    And every step call shows the tool "search" with its description and its arguments

  @req:STEP-3
  Scenario: Every step prompt shows an input that is not text
    Given a ReAct agent with the signature "question, readings: list -> answer" in class form
    And the model replies
      | turn  | thought | tool | args                  |
      | final | done    |      | {"answer": "314159"}  |
    When the agent is called with {"question": "Which reading is highest?", "readings": [314159, 271828]}
    Then every step call shows "Which reading is highest?" and "314159" and "271828"

  @req:STEP-3
  Scenario: Each step prompt shows the trajectory so far
    Given the model replies
      | turn    | thought                  | tool   | args                              |
      | step    | I will add two numbers   | add    | {"a": 1234, "b": 4321}            |
      | step    | Now I look up the city   | search | {"query": "capital of France"}    |
      | final | done                     | | {"answer": "Paris"}               |
    When the agent is called with {"question": "Sum, then capital?"}
    Then step call 1 does not show "I will add two numbers"
    And step call 2 shows "I will add two numbers" and "1234" and "4321" and "5555"
    And step call 3 shows "Now I look up the city" and "Paris is the capital of France."

  @req:STEP-3
  Scenario: Every step prompt shows a tool's argument schema, not only its description
    Given the tool "transfer" that takes the integer "amount" and the string "recipient"
    And the model replies
      | turn    | thought | tool   | args             |
      | final | done    | | {"answer": "ok"} |
    When the agent is called with {"question": "Pay Ann"}
    Then every step call shows the tool "transfer" with its description and its arguments
