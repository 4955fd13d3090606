Feature: The step prompt
  The model is offered exactly the agent's tools (plus, at most, `finish` or the library's
  final-answer tool), and every step call shows the inputs, the whole trajectory so far and every
  tool. A DSPy-shaped step also requires the tool args to be a JSON object, and a step reply it
  cannot parse never crashes the run.

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
  Scenario: Every step prompt requires the tool arguments to be a JSON object
    Given the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 2, "b": 3} |
      | final | done       | | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then every step call says that the tool arguments are a JSON object

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

  @req:STEP-3
  Scenario: The last step call of a long run shows the whole trajectory
    Given the agent's step cap is 15
    And the model replies
      | turn  | thought        | tool | args                    |
      | step  | thought alpha   | add  | {"a": 1001, "b": 7}     |
      | step  | thought bravo   | add  | {"a": 2002, "b": 7}     |
      | step  | thought charlie | add  | {"a": 3003, "b": 7}     |
      | step  | thought delta   | add  | {"a": 4004, "b": 7}     |
      | step  | thought echo    | add  | {"a": 5005, "b": 7}     |
      | step  | thought foxtrot | add  | {"a": 6006, "b": 7}     |
      | step  | thought golf    | add  | {"a": 7007, "b": 7}     |
      | step  | thought hotel   | add  | {"a": 8008, "b": 7}     |
      | step  | thought india   | add  | {"a": 9009, "b": 7}     |
      | step  | thought juliett | add  | {"a": 10010, "b": 7}    |
      | step  | thought kilo    | add  | {"a": 11011, "b": 7}    |
      | step  | thought lima    | add  | {"a": 12012, "b": 7}    |
      | final | done            |      | {"answer": "enough"}    |
    When the agent is called with {"question": "Add them all up, one by one"}
    Then the tool "add" ran 12 times
    And step call 13 shows every earlier step's thought, args and observation

  @req:STEP-4 @capability:signature
  Scenario: A step reply without its tool args never crashes the run
    Given the model replies
      | turn              | thought        | tool | args             |
      | step without args | add them       | add  |                  |
      | step              | try once more  | add  | {"a": 2, "b": 3} |
      | final             | done           |      | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then the agent saw an error for step 1 or was asked again
    And the prediction's "answer" is "5"

  @req:STEP-4 @capability:signature @capability:adapters
  Scenario Outline: A step reply without its tool args never crashes the run, in either adapter
    Given the global adapter is "<adapter>"
    And the model replies
      | turn              | thought        | tool | args             |
      | step without args | add them       | add  |                  |
      | step              | try once more  | add  | {"a": 2, "b": 3} |
      | final             | done           |      | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then the agent saw an error for step 1 or was asked again
    And the prediction's "answer" is "5"

    Examples:
      | adapter |
      | chat    |
      | json    |

  @req:STEP-4 @capability:signature
  Scenario: A step reply without the args of a tool that takes none is asked again or shown as an error
    # Empty args would fit this tool: a library that reads a missing args field as {} runs it on
    # that guess, and neither asks again nor shows the agent an error.
    Given the tool "now" that takes no arguments and returns "12:00"
    And the model replies
      | turn              | thought       | tool | args             |
      | step without args | ask the time  | now  |                  |
      | step              | try once more | now  | {}               |
      | final             | done          |      | {"answer": "12"} |
    When the agent is called with {"question": "What time is it?"}
    Then the agent saw an error for step 1 or was asked again
