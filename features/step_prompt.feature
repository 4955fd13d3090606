Feature: The step prompt
  The internal step signature constrains the tool name to the tools plus `finish`, requires the
  tool args to be a JSON object, and shows the inputs, the trajectory so far and every tool.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"
    And the tool "search" that returns "Paris is the capital of France."

  @req:STEP-1
  Scenario: The step output admits exactly the tool names plus finish
    When the agent is built
    Then the step output "next_tool_name" admits exactly "add, search, finish"

  @req:STEP-1
  Scenario: Without user tools the step output admits only finish
    Given the agent has no tools
    When the agent is built
    Then the step output "next_tool_name" admits exactly "finish"

  @req:STEP-2
  Scenario: Every step prompt requires next_tool_args to be a JSON object
    Given the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 2, "b": 3} |
      | step    | done       | finish | {}               |
      | extract |            |        | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then every step call mentions "next_tool_args" and "JSON"

  @req:STEP-3
  Scenario: Every step prompt shows the inputs and each tool's name, description and arguments
    Given the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 2, "b": 3} |
      | step    | done       | finish | {}               |
      | extract |            |        | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then every step call shows "What is 2 + 3?"
    And every step call shows the tool "add" with its description and its arguments
    And every step call shows the tool "search" with its description and its arguments

  @req:STEP-3
  Scenario: Each step prompt shows the trajectory so far
    Given the model replies
      | turn    | thought                  | tool   | args                              |
      | step    | I will add two numbers   | add    | {"a": 1234, "b": 4321}            |
      | step    | Now I look up the city   | search | {"query": "capital of France"}    |
      | step    | done                     | finish | {}                                |
      | extract |                          |        | {"answer": "Paris"}               |
    When the agent is called with {"question": "Sum, then capital?"}
    Then step call 1 does not show "I will add two numbers"
    And step call 2 shows "I will add two numbers" and "1234" and "4321" and "5555"
    And step call 3 shows "Now I look up the city" and "Paris is the capital of France."

  @req:STEP-3
  Scenario: Every step prompt shows a tool's argument schema, not only its description
    Given the tool "transfer" that takes the integer "amount" and the string "recipient"
    And the model replies
      | turn    | thought | tool   | args             |
      | step    | done    | finish | {}               |
      | extract |         |        | {"answer": "ok"} |
    When the agent is called with {"question": "Pay Ann"}
    Then every step call shows the tool "transfer" with its description and its arguments
