Feature: Model transport retries
  Transient model failures (timeout, connection reset, 429, 5xx) are retried with backoff;
  non-transient ones (400, 401) are not; when retries run out the caller gets one clear error.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"

  @req:NET-1 @capability:lm-retry
  Scenario Outline: A transient model failure is retried and the run succeeds
    Given the model replies
      | turn    | thought | tool   | args            |
      | fault   |         |        | <fault>         |
      | final | done    | | {"answer": "4"} |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the run reached its final answer
    And the model received 2 step calls, the last one its final answer

    Examples:
      | fault      |
      | 429        |
      | 500        |
      | 503        |
      | timeout    |
      | connection |

  @req:NET-1 @capability:lm-retry
  Scenario Outline: A non-transient model failure is not retried and fails the call clearly
    Given the model replies
      | turn  | thought | tool | args    |
      | fault |         |      | <fault> |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the call fails with an error that names "<fault>"
    And the model received exactly 1 step call
    And no tool ran

    Examples:
      | fault |
      | 400   |
      | 401   |

  @req:NET-1 @capability:lm-retry
  Scenario: When retries run out the caller gets one clear error and no tool runs
    Given the model fails every call with "500"
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the call fails with an error that names "500"
    And the model was retried at least once
    And every retry came after a wait
    And the model received 0 extraction calls
    And no tool ran

  @req:NET-1 @capability:lm-retry
  Scenario: The backoff grows between tries
    Given the model replies
      | turn  | thought | tool | args            |
      | fault |         |      | 500             |
      | fault |         |      | 503             |
      | final | done    |      | {"answer": "4"} |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the run reached its final answer
    And the waits between the model's tries grew

  @req:NET-1 @capability:lm-retry
  Scenario: A hung endpoint times out and the call is retried
    Given the model replies
      | turn  | thought | tool | args            |
      | fault |         |      | hang            |
      | final | done    |      | {"answer": "4"} |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the hung request had a timeout, and the retry came after it
    And the run reached its final answer
    And the model received 2 step calls, the last one its final answer

  @req:NET-1 @capability:lm-retry
  Scenario Outline: A rate limit or an unavailable endpoint is retried after the wait it asks for
    Given the model first answers HTTP <status> asking to retry after 3 seconds
    And the model replies
      | turn  | thought | tool | args            |
      | final | done    |      | {"answer": "4"} |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the run reached its final answer
    And the retry came 3 seconds after the first request, as the endpoint asked

    Examples:
      | status |
      | 429    |
      | 503    |
