Feature: Async
  `aforward` and `aresume` give the same results as their sync forms, and concurrent async runs
  share no state.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"

  @req:ASYNC-1 @capability:async
  Scenario: An async call gives the same result as a sync call
    Given the model replies
      | turn  | thought    | tool | args                   |
      | step  | I will add | add  | {"a": 1234, "b": 4321} |
      | final | done       |      | {"answer": "5555"}     |
    When the agent is called with {"question": "What is 1234 + 4321?"}
    And the model replies
      | turn  | thought    | tool | args                   |
      | step  | I will add | add  | {"a": 1234, "b": 4321} |
      | final | done       |      | {"answer": "5555"}     |
    And the agent is called asynchronously with {"question": "What is 1234 + 4321?"}
    Then the run reached its final answer
    And the tool "add" ran 2 times
    And call 2 gave the same result as call 1

  @req:ASYNC-1 @capability:async
  Scenario: An async call shows a raising tool's error to the agent as a sync call does
    Given the tool "explode" that raises ValueError "the disk is on fire"
    And the model replies
      | turn  | thought | tool    | args             |
      | step  | try it  | explode | {"query": "x"}   |
      | final | done    |         | {"answer": "no"} |
    When the agent is called with {"question": "Burn it"}
    Then call 1 showed the agent an error for the call of "explode", as ERR-1 requires
    When the model replies
      | turn  | thought | tool    | args             |
      | step  | try it  | explode | {"query": "x"}   |
      | final | done    |         | {"answer": "no"} |
    And the agent is called asynchronously with {"question": "Burn it"}
    Then call 2 showed the agent an error for the call of "explode", as ASYNC-1 requires
    And the run reached its final answer
    And call 2 gave the same result as call 1

  @req:ASYNC-1 @capability:async @capability:tool-approval
  Scenario: An async resume gives the same result as a sync resume
    Given the interruptible tool "delete_file" that takes the string "path"
    And the model replies
      | turn | thought   | tool        | args                    |
      | step | delete it | delete_file | {"path": "/tmp/report"} |
    When the agent is called asynchronously with {"question": "Clean up"}
    And the model replies
      | turn    | thought | tool   | args                |
      | final | done    | | {"answer": "gone"}  |
    And the user answers "yes" asynchronously, as HITL-4 requires
    Then the tool "delete_file" ran exactly once, with {"path": "/tmp/report"}
    And the run reached its final answer

  @req:ASYNC-2 @capability:async @capability:signature @capability:adapters
  Scenario: Fifty overlapping async runs share no state
    Given the global adapter is "chat"
    And a first agent without its own adapter uses the "chat" format, as ADP-1 requires
    And the library builds an agent with the adapter "json" of its own, as ADP-2 requires
    When 50 async runs with different adapters, step caps and scripts overlap
    Then every concurrent run used only its own agent's format and got its own answer
    And every concurrent run made exactly its own scripted steps
    And the concurrent runs were in flight at the same time

  @req:ASYNC-2 @capability:async
  Scenario: Fifty overlapping async runs of one agent share no state
    When 50 async runs of one agent with different step caps and scripts overlap
    Then every concurrent run got its own answer
    And every concurrent run made exactly its own scripted steps
    And the concurrent runs were in flight at the same time
