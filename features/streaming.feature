Feature: Streaming
  A streaming run emits an event per step and ends with exactly one `done` event that carries
  the stop reason.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"

  @req:STREAM-1 @capability:streaming
  Scenario: A streaming run emits its steps in order and ends with one done event
    Given the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 2, "b": 3} |
      | final | done       | | {"answer": "5"}  |
    When the agent is streamed with {"question": "What is 2 + 3?"}
    Then the stream emitted no step twice, as STREAM-1 requires
    And the stream's step events show "add" with {"a": 2, "b": 3} and observed "5"
    And the stream ends with exactly one done event whose stop reason is "finish"
    And each step event reached the caller before the next step call was made

  @req:STREAM-1 @capability:streaming @capability:max-steps-extract|max-steps-return
  Scenario: A streaming run stopped by the step cap still ends with one done event
    Given the agent's step cap is 2
    And the agent does not raise on the step cap
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "2"}
    When the agent is streamed with {"question": "What is 1 + 1?"}
    Then the stream emitted no step twice, as STREAM-1 requires
    And the stream has 2 step events
    And each step event reached the caller before the next step call was made
    And the stream ends with exactly one done event whose stop reason is "max_steps"

  @req:LOOP-4 @capability:per-call-cap @capability:streaming @capability:max-steps-extract|max-steps-return
  Scenario: A streamed call's own step cap applies to that call
    Given the agent's step cap is 5
    And the agent does not raise on the step cap
    And the model answers every step with tool "add" and args {"a": 1, "b": 1}
    And the model answers every extraction with {"answer": "2"}
    When the agent is streamed with {"question": "What is 1 + 1?"} and a step cap of 2
    Then the stream emitted no step twice, as STREAM-1 requires
    And the stream has 2 step events
    And the model received exactly 2 step calls
