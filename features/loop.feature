Feature: The tool loop
  The model chooses a tool and its args; the tool runs with exactly those args and its result
  becomes an observation. The final answer ends the loop; the step cap ends it too.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"
    And the tool "search" that returns "Paris is the capital of France."

  # Step 2 writes text beside its call, as TRJ-1's script does: a call after a tool result runs too
  # (a loop that takes that text for a final answer drops the call).
  @req:LOOP-1
  Scenario: The chosen tool runs with exactly the chosen args and its result becomes an observation
    Given the model replies
      | turn    | thought        | tool   | args                           |
      | step    | I will add     | add    | {"a": 1234, "b": 4321}         |
      | step    | Now look it up | search | {"query": "capital of France"} |
      | final | I have the sum | | {"answer": "5555"}             |
    When the agent is called with {"question": "What is 1234 + 4321, and the capital of France?"}
    Then the tool "add" ran exactly once, with {"a": 1234, "b": 4321}
    And step 1 of the trajectory called "add" with {"a": 1234, "b": 4321} and observed "5555"
    And step call 2 shows "5555"
    And the tool "search" ran exactly once, with {"query": "capital of France"}
    And step call 3 shows "Paris is the capital of France."

  @req:LOOP-1
  Scenario: A tool's structured result is the observation the model sees next
    Given the tool "forecast" that returns the object {"station": "Blindern", "highs": [7, 9], "wind": {"gusts": 14}}
    And the model replies
      | turn  | thought       | tool     | args              |
      | step  | check Oslo    | forecast | {"query": "Oslo"} |
      | final | cold and windy |         | {"answer": "cold"} |
    When the agent is called with {"question": "What will the weather be in Oslo?"}
    Then the tool "forecast" ran exactly once, with {"query": "Oslo"}
    And the observation of step 1 holds {"station": "Blindern", "highs": [7, 9], "wind": {"gusts": 14}}
    And step call 2 shows "Blindern" and "gusts"

  @req:LOOP-1
  Scenario: A tool the model did not choose never runs
    Given the model replies
      | turn    | thought    | tool   | args                |
      | step    | I will add | add    | {"a": 7, "b": 8}    |
      | final | done       | | {"answer": "15"}    |
    When the agent is called with {"question": "What is 7 + 8?"}
    Then the tool "search" never ran
    And the tool "add" ran exactly once, with {"a": 7, "b": 8}

  @req:LOOP-2 @smoke
  Scenario: Choosing finish stops the loop at once
    Given the agent's step cap is 6
    And the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 2, "b": 3} |
      | final | done       | | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then the model received 2 step calls, the last one its final answer
    And the tool "add" ran exactly once, with {"a": 2, "b": 3}
    And the final answer is the last model call

  @req:LOOP-2
  Scenario: Choosing finish first runs no tool at all
    Given the model replies
      | turn    | thought          | tool   | args            |
      | final | I know it already | | {"answer": "4"} |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the model received 1 step calls, the last one its final answer
    And no tool ran

  @req:LOOP-3
  Scenario: The step cap stops a loop that never chooses finish
    Given the agent's step cap is 3
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "2"}
    When the agent is called with {"question": "What is 1 + 1?"}
    Then the model received exactly 3 step calls
    And the tool "add" ran 3 times

  @req:LOOP-3
  Scenario: A step cap of one allows exactly one step
    Given the agent's step cap is 1
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "2"}
    When the agent is called with {"question": "What is 1 + 1?"}
    Then the model received exactly 1 step call
    And the tool "add" ran 1 time

  @req:LOOP-3
  Scenario: A final answer on the last allowed step is accepted
    Given the agent's step cap is 2
    And the model replies
      | turn  | thought    | tool | args             |
      | step  | I will add | add  | {"a": 1, "b": 1} |
      | final | done       |      | {"answer": "2"}  |
    When the agent is called with {"question": "What is 1 + 1?"}
    Then the run reached its final answer
    And the model received 2 step calls, the last one its final answer
    And the run is reported as stopped by its final answer, not by the step cap

  @req:LOOP-3
  Scenario: A final answer on step N of a cap of N is reported as a final answer
    Given the agent's step cap is 3
    And the model replies
      | turn  | thought      | tool | args             |
      | step  | first add    | add  | {"a": 1, "b": 1} |
      | step  | second add   | add  | {"a": 2, "b": 2} |
      | final | I have both  |      | {"answer": "2, 4"} |
    When the agent is called with {"question": "What are 1 + 1 and 2 + 2?"}
    Then the run reached its final answer
    And the model received 3 step calls, the last one its final answer
    And the run is reported as stopped by its final answer, not by the step cap

  @req:LOOP-4 @capability:per-call-cap
  Scenario: A per-call step cap overrides the agent's
    Given the agent's step cap is 5
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "2"}
    When the agent is called with {"question": "What is 1 + 1?"} and a step cap of 2
    Then the model received exactly 2 step calls
    And the tool "add" ran 2 times

  @req:LOOP-4 @capability:per-call-cap
  Scenario: A per-call step cap applies to that call only
    Given the agent's step cap is 3
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "2"}
    When the agent is called with {"question": "What is 1 + 1?"} and a step cap of 1
    And the agent is called again with {"question": "What is 1 + 1?"}
    Then call 1 made exactly 1 step call
    And call 2 made exactly 3 step calls

  @req:LOOP-5
  Scenario: An unknown tool name is never run, and the loop goes on
    Given the model replies
      | turn    | thought          | tool              | args             |
      | step    | wipe it all      | delete_everything | {"path": "/"}    |
      | step    | add instead      | add               | {"a": 2, "b": 3} |
      | final | done             | | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then no tool ran with {"path": "/"}
    And the agent saw an error for step 1 or was asked again
    And the tool "add" ran exactly once, with {"a": 2, "b": 3}
    And the run reached its final answer

  @req:LOOP-5
  Scenario: An unknown tool name never crashes the run, also when it is the last step
    Given the agent's step cap is 2
    And the model replies
      | turn  | thought     | tool              | args             |
      | step  | add first   | add               | {"a": 2, "b": 3} |
    And the model answers every step with tool "delete_everything" and args {"path": "/"}
    And the model answers every extraction with {"answer": "5"}
    When the agent is called with {"question": "What is 2 + 3?"}
    Then no tool ran with {"path": "/"}
    And the run ended with the step cap, without crashing

  @req:LOOP-6 @capability:parallel-tool-calls
  Scenario: Several tool calls in one reply each run once with their own args
    Given the model replies
      | turn  | thought       | tool   | args                           |
      | step  | two at once   | add    | {"a": 1, "b": 2}               |
      | and   |               | search | {"query": "capital of France"} |
      | final | done          |        | {"answer": "3, Paris"}         |
    When the agent is called with {"question": "Sum and capital?"}
    Then the tool "add" ran exactly once, with {"a": 1, "b": 2}
    And the tool "search" ran exactly once, with {"query": "capital of France"}
    And the trajectory's tool steps are
      | thought     | tool   | args                           | observation                     |
      | two at once | add    | {"a": 1, "b": 2}               | 3                               |
      | two at once | search | {"query": "capital of France"} | Paris is the capital of France. |
    And step call 2 shows "Paris is the capital of France."

  @req:LOOP-6 @capability:parallel-tool-calls
  Scenario: Parallel calls of one tool each get their own observation, in order
    Given the model replies
      | turn  | thought       | tool | args              |
      | step  | three sums    | add  | {"a": 1, "b": 1}  |
      | and   |               | add  | {"a": 20, "b": 2} |
      | and   |               | add  | {"a": 300, "b": 3} |
      | final | done          |      | {"answer": "2, 22, 303"} |
    When the agent is called with {"question": "Three sums?"}
    Then the tool "add" ran 3 times
    And the trajectory's tool steps are
      | thought    | tool | args               | observation |
      | three sums | add  | {"a": 1, "b": 1}   | 2           |
      | three sums | add  | {"a": 20, "b": 2}  | 22          |
      | three sums | add  | {"a": 300, "b": 3} | 303         |

  @req:LOOP-6 @capability:parallel-tool-calls
  Scenario: Eleven parallel calls keep the order the model gave them
    Given the model replies
      | turn  | thought       | tool | args              |
      | step  | eleven sums   | add  | {"a": 1, "b": 0}  |
      | and   |               | add  | {"a": 2, "b": 0}  |
      | and   |               | add  | {"a": 3, "b": 0}  |
      | and   |               | add  | {"a": 4, "b": 0}  |
      | and   |               | add  | {"a": 5, "b": 0}  |
      | and   |               | add  | {"a": 6, "b": 0}  |
      | and   |               | add  | {"a": 7, "b": 0}  |
      | and   |               | add  | {"a": 8, "b": 0}  |
      | and   |               | add  | {"a": 9, "b": 0}  |
      | and   |               | add  | {"a": 10, "b": 0}  |
      | and   |               | add  | {"a": 11, "b": 0}  |
      | final | done          |      | {"answer": "done"} |
    When the agent is called with {"question": "Eleven sums?"}
    Then the tool "add" ran 11 times
    And the trajectory's tool steps are
      | thought     | tool | args             | observation |
      | eleven sums | add | {"a": 1, "b": 0} | 1 |
      | eleven sums | add | {"a": 2, "b": 0} | 2 |
      | eleven sums | add | {"a": 3, "b": 0} | 3 |
      | eleven sums | add | {"a": 4, "b": 0} | 4 |
      | eleven sums | add | {"a": 5, "b": 0} | 5 |
      | eleven sums | add | {"a": 6, "b": 0} | 6 |
      | eleven sums | add | {"a": 7, "b": 0} | 7 |
      | eleven sums | add | {"a": 8, "b": 0} | 8 |
      | eleven sums | add | {"a": 9, "b": 0} | 9 |
      | eleven sums | add | {"a": 10, "b": 0} | 10 |
      | eleven sums | add | {"a": 11, "b": 0} | 11 |

  @req:LOOP-5
  Scenario: The agent is told that the tool it chose does not exist
    Given the model replies
      | turn  | thought     | tool              | args               |
      | step  | wipe it all | delete_everything | {"path": "/"}      |
      | final | done        |                   | {"answer": "none"} |
    When the agent is called with {"question": "Clean up"}
    Then no tool ran
    And the agent was told that the tool "delete_everything" it chose in step 1 is unknown

  @req:LOOP-7
  Scenario: The answer is the final reply alone, not joined with the text beside earlier tool calls
    Given the model replies
      | turn  | thought     | tool | args             |
      | step  | try it      | add  | {"a": 1, "b": 1} |
      | step  | add instead | add  | {"a": 2, "b": 3} |
      | final | done        |      | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then the run reached its final answer
    And the prediction's "answer" is "5"
