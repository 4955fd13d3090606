Feature: The model over HTTP
  The library's own HTTP client talks to an OpenAI-compatible endpoint at a base URL, which answers
  from the scenario's script: live on loopback, or replayed from the scenario's cassette. What the
  in-process scripted model cannot see is checked here: the requests as serialised on the wire,
  and retries on real HTTP statuses.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"

  @req:LOOP-1 @capability:http
  Scenario: Over HTTP, the chosen tool runs with exactly the chosen args
    Given the model replies
      | turn    | thought        | tool   | args                   |
      | step    | I will add     | add    | {"a": 1234, "b": 4321} |
      | final | I have the sum | | {"answer": "5555"}     |
    When the agent is called with {"question": "What is 1234 + 4321?"}
    Then the tool "add" ran exactly once, with {"a": 1234, "b": 4321}
    And step 1 of the trajectory called "add" with {"a": 1234, "b": 4321} and observed "5555"
    And step call 2 shows "5555"

  @req:EXT-1 @capability:http @capability:signature
  Scenario: Over HTTP, the extraction call receives the inputs and the trajectory
    Given the model replies
      | turn    | thought            | tool   | args                 |
      | step    | I will add the two | add    | {"a": 600, "b": 66}  |
      | final | I have the sum now | | {"answer": "666"}    |
    When the agent is called with {"question": "What is 600 + 66?"}
    Then the extraction call shows "What is 600 + 66?" and "I will add the two" and "666"
    And the prediction's "answer" is "666"
    And the final answer is the last model call

  @req:NET-1 @capability:lm-retry @capability:http
  Scenario Outline: Over HTTP, a rate limit or a server error is retried and the run succeeds
    Given the endpoint first answers HTTP <answer>
    And the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 2, "b": 2} |
      | final | done       | | {"answer": "4"}  |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the run reached its final answer
    And the first request was sent again, unchanged
    And the model received 3 step calls, the last one its final answer
    And the tool "add" ran exactly once, with {"a": 2, "b": 2}

    Examples:
      | answer                  |
      | 429 with Retry-After 0  |
      | 500                     |
      | 503                     |

  @req:NET-1 @capability:lm-retry @capability:http
  Scenario Outline: Over HTTP, a bad request or a refused key is not retried and fails the call clearly
    Given the endpoint first answers HTTP <status>
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the call fails with an error that names "<status>"
    And the model received exactly 1 step call
    And no tool ran

    Examples:
      | status |
      | 400    |
      | 401    |

  @req:NET-1 @capability:lm-retry @capability:http
  Scenario: Over HTTP, when retries run out the caller gets one clear error and the next call starts clean
    Given the model replies
      | turn | thought    | tool | args             |
      | step | I will add | add  | {"a": 2, "b": 2} |
    And the model fails every call with "500"
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the call fails with an error that names "500"
    And the last request was sent again, unchanged
    And the model received 0 extraction calls
    And the tool "add" ran exactly once, with {"a": 2, "b": 2}
    When the model replies
      | turn    | thought          | tool   | args             |
      | step    | I will add again | add    | {"a": 3, "b": 3} |
      | final | done             | | {"answer": "6"}  |
    And the agent is called again with {"question": "What is 3 + 3?"}
    Then the run reached its final answer
    And the trajectory's tool steps are
      | thought          | tool | args             | observation |
      | I will add again | add  | {"a": 3, "b": 3} | 6           |
