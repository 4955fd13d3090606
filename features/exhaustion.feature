Feature: Exhaustion
  When the step budget runs out the agent raises its max-iterations error with the run's
  structured context, extracts its outputs from the partial trajectory, or returns normally,
  flagged as stopped by the cap; outside raise mode it explains what was tried. Every run reports
  why it stopped; every call gets a fresh budget.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"
    And the tool "search" that returns "Paris is the capital of France."

  @req:EXH-1 @capability:max-steps-error
  Scenario: Exhausting the steps raises MaxIterationsError saying the limit was reached
    Given the agent's step cap is 2
    And the agent raises on the step cap
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "partial"}
    When the agent is called with {"question": "What is 1 + 1?"}
    Then the call raised MaxIterationsError with a message that matches "reach|exceed|limit|maximum"
    And the model received exactly 2 step calls

  @req:EXH-1 @capability:max-steps-error
  Scenario: Finishing on the last allowed step does not raise
    Given the agent's step cap is 2
    And the agent raises on the step cap
    And the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 1, "b": 1} |
      | final | done       | | {"answer": "2"}  |
    When the agent is called with {"question": "What is 1 + 1?"}
    Then the run reached its final answer

  @req:EXH-2 @capability:max-steps-error
  Scenario: MaxIterationsError carries the run's structured context
    Given the agent's step cap is 2
    And the agent raises on the step cap
    And the model replies
      | turn | thought  | tool   | args                           |
      | step | first    | add    | {"a": 20, "b": 22}             |
      | step | second   | search | {"query": "capital of France"} |
    And the model answers every extraction with {"answer": "partial"}
    When the agent is called with {"question": "Sum, then capital?"}
    Then the call raised MaxIterationsError
    And the error's "iterations" is 2
    And the error's "max_iterations" is 2
    And the trajectory's tool steps are
      | thought | tool   | args                           | observation                     |
      | first   | add    | {"a": 20, "b": 22}             | 42                              |
      | second  | search | {"query": "capital of France"} | Paris is the capital of France. |
    And the error's tools used are ["add", "search"]
    And the error's last observation, if it gives one, mentions "Paris is the capital of France."

  @req:EXH-2 @capability:max-steps-error
  Scenario: The history on MaxIterationsError is a snapshot the caller owns
    Given the agent's step cap is 1
    And the agent raises on the step cap
    And the model answers every step with tool "add" and args {"a": 2, "b": 2}
    And the model answers every extraction with {"answer": "partial"}
    When the agent is called with {"question": "What is 2 + 2?"}
    And the caller mutates what the call returned
    And the agent is called again with {"question": "What is 2 + 2?"}
    Then no model call of call 2 shows the caller's mutation
    And the error's "history" has 1 step

  @req:EXH-3 @capability:max-steps-error
  Scenario: When no tool ran, tools_used is empty
    Given the agent's step cap is 1
    And the agent raises on the step cap
    And the model answers every step with tool "delete_everything" and args {"path": "/"}
    And the model answers every extraction with {"answer": "partial"}
    When the agent is called with {"question": "Clean up"}
    Then call 1 did not crash on the unknown tool, as LOOP-5 requires
    And the call raised MaxIterationsError
    And the error's tools used are []
    And the error's "iterations" is 1

  @req:EXH-3 @capability:max-steps-error
  Scenario: After steps with thoughts, a partial final answer the library gives is not empty
    Given the agent's step cap is 2
    And the agent raises on the step cap
    And the model replies
      | turn | thought              | tool | args             |
      | step | first I add 1 and 1  | add  | {"a": 1, "b": 1} |
      | step | the sum looks like 2 | add  | {"a": 1, "b": 1} |
    And the model answers every extraction with {"answer": "2"}
    When the agent is called with {"question": "What is 1 + 1?"}
    Then the call raised MaxIterationsError
    And the error's "iterations" is 2
    And the error's partial final answer, if it gives one, is not empty

  @req:EXH-3 @capability:max-steps-error
  Scenario: A step cap of zero is refused at configuration, or raises before any model call
    Given the agent's step cap is 0
    And the agent raises on the step cap
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "2"}
    When the agent is called with {"question": "What is 1 + 1?"} unless it was refused
    Then the step cap of zero was refused with a clear error, or the call raised on it with nothing run
    And the model was never called

  @req:EXH-3 @capability:max-steps-error @capability:per-call-cap
  Scenario: A step cap of zero given to one call is refused, or raises before any model call
    Given the agent raises on the step cap
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "2"}
    When the agent is called with {"question": "What is 1 + 1?"} and a step cap of 0
    Then the step cap of zero was refused with a clear error, or the call raised on it with nothing run
    And the model was never called

  @req:EXH-4
  Scenario: A run that chooses finish reports the stop reason finish and its step count
    Given the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 2, "b": 3} |
      | final | done       | | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then the stop reason is "finish"
    And the run reports 2 iterations

  @req:EXH-4
  Scenario: A run stopped by the step cap reports that the cap stopped it
    Given the agent's step cap is 3
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "2"}
    When the agent is called with {"question": "What is 1 + 1?"}
    Then the run reports that the step cap stopped it after 3 steps

  @req:EXH-4 @capability:max-steps-error
  Scenario: A run that raises on the step cap is identified by its error, with its step count
    Given the agent's step cap is 2
    And the agent raises on the step cap
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "2"}
    When the agent is called with {"question": "What is 1 + 1?"}
    Then the run reports that the step cap stopped it after 2 steps

  @req:EXH-5 @capability:cap-summary @capability:max-steps-extract|max-steps-return
  Scenario: On the step cap the user is told what was tried and the last error
    Given the tool "explode" that raises ValueError "the disk is on fire"
    And the agent's step cap is 3
    And the agent does not raise on the step cap
    And the model replies
      | turn    | thought | tool    | args             |
      | step    | one     | add     | {"a": 1, "b": 1} |
      | step    | two     | add     | {"a": 2, "b": 2} |
      | step    | three   | explode | {"query": "x"}   |
    And the model answers every extraction with {"answer": "?"}
    When the agent is called with {"question": "Do things"}
    Then the user-facing message counts "add" 2 times and "explode" 1 time
    And the user-facing message mentions "the disk is on fire"

  @req:EXH-5 @capability:cap-summary @capability:max-steps-extract|max-steps-return
  Scenario: On the step cap with no tool completed the user is told so
    Given the agent's step cap is 2
    And the agent does not raise on the step cap
    And the model answers every step with tool "delete_everything" and args {"path": "/"}
    And the model answers every extraction with {"answer": "?"}
    When the agent is called with {"question": "Clean up"}
    Then the user-facing message says that no tool completed

  @req:EXH-6
  Scenario: A follow-up call starts with a fresh step budget
    Given the agent's step cap is 2
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "2"}
    When the agent is called with {"question": "What is 1 + 1?"}
    And the agent is called again with {"question": "And again?"}
    Then call 1 made exactly 2 step calls
    And call 2 made exactly 2 step calls

  @req:EXH-6
  Scenario: A call after one that gave its final answer starts with a fresh step budget
    # The first call ends on its answer, not on the cap: a step count kept across calls and reset
    # only by a cap stop leaves the second call one step.
    Given the agent's step cap is 3
    And the model replies
      | turn  | thought    | tool | args             |
      | step  | I will add | add  | {"a": 1, "b": 1} |
      | final | done       |      | {"answer": "2"}  |
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "2"}
    When the agent is called with {"question": "What is 1 + 1?"}
    And the agent is called again with {"question": "And again?"}
    Then call 1 made exactly 2 step calls
    And call 2 made exactly 3 step calls

  @req:EXH-7 @capability:max-steps-return
  Scenario: On the step cap the run returns normally, flagged as stopped by the cap
    Given the agent's step cap is 2
    And the agent returns normally on the step cap
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    When the agent is called with {"question": "What is 1 + 1?"}
    Then the call returned normally, flagged as stopped by the step cap
    And the model received exactly 2 step calls
    And the tool "add" ran 2 times

  @req:EXH-7 @capability:max-steps-return
  Scenario: A final answer on the last allowed step is not flagged as stopped by the cap
    Given the agent's step cap is 2
    And the agent returns normally on the step cap
    And the model replies
      | turn  | thought    | tool | args             |
      | step  | I will add | add  | {"a": 1, "b": 1} |
      | final | done       |      | {"answer": "2"}  |
    When the agent is called with {"question": "What is 1 + 1?"}
    Then the run reached its final answer
    And the stop reason is "finish"
