Feature: Tool errors
  A tool that raises, whatever the exception, does not crash the run: the agent sees an error
  observation bound to that call, with the exception's message, and goes on. Where the library
  stops after repeated failures, three similar ones in a row stop the retries, and each call
  tracks errors afresh.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"
    And the tool "explode" that raises ValueError "the disk is on fire"

  @req:ERR-1
  Scenario Outline: A raising tool becomes an error observation bound to its call, and the loop goes on
    Given the tool "crash" that raises <error> "the disk is on fire"
    And the model replies
      | turn  | thought     | tool  | args             |
      | step  | try it      | crash | {"query": "x"}   |
      | step  | add instead | add   | {"a": 2, "b": 3} |
      | final | done        |       | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then the observation of step 1 is an error bound to the call of "crash"
    And the tool "add" ran exactly once, with {"a": 2, "b": 3}
    And the run reached its final answer

    Examples:
      | error        |
      | ValueError   |
      | KeyError     |
      | RuntimeError |
      | DiskOnFire   |

  @req:ERR-1
  Scenario: A tool that raises on its second call still has each error bound to its own call
    Given the tool "flaky" that raises, call by call
      | call | error        | message       |
      | 2    | TimeoutError | took too long |
    And the model replies
      | turn  | thought | tool  | args             |
      | step  | one     | flaky | {"query": "a"}   |
      | step  | two     | flaky | {"query": "b"}   |
      | step  | three   | add   | {"a": 1, "b": 1} |
      | final | done    |       | {"answer": "2"}  |
    When the agent is called with {"question": "Keep trying"}
    Then the observation of step 2 is an error bound to the call of "flaky"
    And the tool "add" ran exactly once, with {"a": 1, "b": 1}
    And the run reached its final answer

  @req:ERR-4
  Scenario Outline: The error observation carries the exception's message
    Given the tool "crash" that raises <error> "the disk is on fire"
    And the model replies
      | turn  | thought     | tool  | args             |
      | step  | try it      | crash | {"query": "x"}   |
      | step  | add instead | add   | {"a": 2, "b": 3} |
      | final | done        |       | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then the error observation of step 1 carries the message "the disk is on fire"
    And step call 2 shows "the disk is on fire"

    Examples:
      | error      |
      | ValueError |
      | DiskOnFire |

  @req:ERR-2 @capability:repeated-error-stop
  Scenario: Three similar failures in a row stop the retries with a suggestion
    Given the agent's step cap is 8
    And the model answers every step with tool "explode" and args {"query": "x"}
    And the model answers every extraction with {"answer": "sorry"}
    When the agent is called with {"question": "Burn it"}
    Then the model received exactly 3 step calls
    And the tool "explode" ran 3 times
    And the stop reason is "repeated_tool_errors"
    And the user-facing message names "explode" and suggests what to do

  @req:ERR-2 @capability:repeated-error-stop
  Scenario: Failures with a success between them do not stop the agent
    Given the model replies
      | turn    | thought | tool    | args             |
      | step    | one     | explode | {"query": "a"}   |
      | step    | two     | explode | {"query": "b"}   |
      | step    | three   | add     | {"a": 1, "b": 1} |
      | step    | four    | explode | {"query": "c"}   |
      | step    | five    | explode | {"query": "d"}   |
      | final | done    | | {"answer": "2"}  |
    When the agent is called with {"question": "Keep trying"}
    Then the model received 6 step calls, the last one its final answer
    And the tool "explode" ran 4 times

  @req:ERR-2 @capability:repeated-error-stop
  Scenario: Failures of different kinds do not count as similar
    Given the tool "flaky" that raises, call by call
      | call | error        | message        |
      | 1    | ValueError   | bad value      |
      | 2    | TimeoutError | took too long  |
      | 3    | ValueError   | bad value      |
    And the model replies
      | turn    | thought | tool   | args           |
      | step    | one     | flaky  | {"query": "a"} |
      | step    | two     | flaky  | {"query": "b"} |
      | step    | three   | flaky  | {"query": "c"} |
      | step    | four    | flaky  | {"query": "d"} |
      | final | done    | | {"answer": "ok"} |
    When the agent is called with {"question": "Keep trying"}
    Then the model received 5 step calls, the last one its final answer
    And the tool "flaky" ran 4 times

  @req:ERR-2 @capability:repeated-error-stop
  Scenario: The error history keeps the last ten errors
    Given the tool "flaky" that raises on every call, alternating ValueError and TimeoutError, numbered "failure"
    And the model answers every step with tool "flaky" and args {"query": "x"}
    And the model answers every extraction with {"answer": "sorry"}
    And the agent's step cap is 12
    When the agent is called with {"question": "Keep trying"}
    Then the tool "flaky" ran 12 times
    And the error history holds exactly the errors "failure 3" to "failure 12", in order

  @req:ERR-3 @capability:repeated-error-stop
  Scenario: A new call starts with clean error tracking
    Given the agent's step cap is 5
    And the model answers every step with tool "explode" and args {"query": "x"}
    And the model answers every extraction with {"answer": "sorry"}
    When the agent is called with {"question": "First try"}
    Then call 1 stopped with "repeated_tool_errors", as ERR-2 requires
    When the model's standing answers are withdrawn
    And the model replies
      | turn  | thought | tool    | args             |
      | step  | one     | explode | {"query": "a"}   |
      | step  | two     | explode | {"query": "b"}   |
      | step  | add     | add     | {"a": 1, "b": 1} |
      | final | done    |         | {"answer": "2"}  |
    And the agent is called again with {"question": "Second try"}
    Then call 2 made exactly 4 step calls
    And the tool "add" ran exactly once, with {"a": 1, "b": 1}
    And the run reached its final answer
