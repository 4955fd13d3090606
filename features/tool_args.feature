Feature: Tool arguments
  Whatever JSON object the model writes as the tool args reaches the tool as equal JSON values;
  anything else (not an object, malformed) never reaches the tool, never crashes the run, and is
  shown to the agent as an error. A call against the schema reaches the tool only converted
  losslessly to the declared types. Args of any size or depth reach the tool intact or are refused
  saying why: the limits are the library's, reported, not judged.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "transfer" that takes the integer "amount" and the string "recipient"

  @req:ARGS-1
  Scenario: Any JSON object the model writes reaches the tool intact
    Given the tool "record" that takes the string "text" and the object "data"
    When the model sends 40 generated JSON objects as arguments to "record"
    Then the tool "record" received each of them exactly as sent

  @req:ARGS-1
  Scenario: Quotes and brackets inside a string argument reach the tool intact
    Given the model's step calls "transfer" with a recipient of 100 escaped quotes and open brackets
    And the model replies
      | turn    | thought | tool   | args               |
      | final | done    | | {"answer": "paid"} |
    When the agent is called with {"question": "Pay the odd recipient"}
    Then the tool "transfer" received each of them exactly as sent

  @req:ARGS-1
  Scenario: Wide but shallow tool args reach the tool intact
    Given the tool "store" that takes the object "data"
    And the model's step calls "store" with 100 small objects side by side
    And the model replies
      | turn    | thought | tool   | args                 |
      | final | done    | | {"answer": "stored"} |
    When the agent is called with {"question": "Store them"}
    Then the tool "store" received each of them exactly as sent

  @req:ARGS-2
  Scenario Outline: Tool args that are JSON but not an object never reach the tool
    Given the model replies
      | turn               | thought  | tool     | args             |
      | step with raw args | send it  | transfer | <args>           |
      | final | give up  | | {"answer": "no"} |
    When the agent is called with {"question": "Pay Ann"}
    Then the tool "transfer" never ran
    And the agent saw an error for step 1 or was asked again
    And the run reached its final answer

    Examples:
      | args                               |
      | [50, "Ann"]                        |
      | "amount=50, recipient=Ann"         |
      | 50                                 |
      | null                               |

  @req:ARGS-2 @capability:signature
  Scenario Outline: Under the JSON adapter, tool args that are JSON but not an object never reach the tool
    Given the global adapter is "json"
    And the model replies
      | turn               | thought | tool     | args             |
      | step with raw args | send it | transfer | <args>           |
      | final              | give up |          | {"answer": "no"} |
    When the agent is called with {"question": "Pay Ann"}
    Then the tool "transfer" never ran
    And the agent saw an error for step 1 or was asked again
    And the prediction's "answer" is "no"

    Examples:
      | args          |
      | [50, "Ann"]   |
      | "amount=50"   |
      | null          |

  @req:ARGS-3
  Scenario Outline: Malformed JSON tool args never crash the run
    Given the model replies
      | turn               | thought  | tool     | args             |
      | step with raw args | send it  | transfer | <args>           |
      | final | give up  | | {"answer": "no"} |
    When the agent is called with {"question": "Pay Ann"}
    Then the tool "transfer" never ran
    And the agent saw an error for step 1 or was asked again
    And the run reached its final answer

    Examples:
      | args                                |
      | {"amount": 50, "recipient": "Ann"   |
      | {amount: 50, recipient: Ann}        |
      | {"amount": 50,, "recipient": "Ann"} |
      | not json at all                     |
      | {'amount': 50, 'recipient': 'Ann'}  |
      | {"amount": 50, "recipient": "Ann",} |

  @req:ARGS-3
  Scenario Outline: Python literals in tool args are malformed JSON, never guessed at
    Given the tool "notify" that takes the string "recipient" and the boolean "urgent"
    And the model replies
      | turn               | thought  | tool   | args             |
      | step with raw args | tell her | notify | <args>           |
      | final              | give up  |        | {"answer": "no"} |
    When the agent is called with {"question": "Tell Ann"}
    Then the tool "notify" never ran
    And the agent saw an error for step 1 or was asked again
    And the run reached its final answer

    Examples:
      | args                                  |
      | {"recipient": "Ann", "urgent": True}  |
      | {'recipient': 'Ann', 'urgent': False} |
      | {"recipient": "Ann", "urgent": true,} |
      | {"recipient": "Ann", "urgent": None}  |

  @req:ARGS-3 @capability:signature
  Scenario Outline: Tool args in a code fence never crash the run
    Given the global adapter is "<adapter>"
    And the model replies
      | turn               | thought | tool     | args                                                |
      | step with raw args | send it | transfer | ```json {"amount": 50, "recipient": "Ann"} ```      |
      | final              | done    |          | {"answer": "paid"}                                  |
    When the agent is called with {"question": "Pay Ann"}
    Then the tool "transfer" ran exactly once with {"amount": 50, "recipient": "Ann"}, or the agent saw an error for step 1
    And the prediction's "answer" is "paid"

    Examples:
      | adapter |
      | chat    |
      | json    |

  @req:ARGS-3
  Scenario Outline: Malformed JSON tool args never reach a tool that takes no arguments
    # Empty args would fit this tool: a loop that reads malformed args as {} runs it on that guess.
    Given the tool "now" that takes no arguments and returns "12:00"
    And the model replies
      | turn               | thought      | tool | args             |
      | step with raw args | ask the time | now  | <args>           |
      | final              | give up      |      | {"answer": "no"} |
    When the agent is called with {"question": "What time is it?"}
    Then the tool "now" never ran
    And the agent saw an error for step 1 or was asked again

    Examples:
      | args            |
      | {               |
      | {,}             |
      | not json at all |

  @req:ARGS-4
  Scenario Outline: Tool args that break the tool's schema never reach it with a wrong or missing value
    Given the model replies
      | turn  | thought | tool     | args             |
      | step  | send it | transfer | <args>           |
      | final | give up |          | {"answer": "no"} |
    When the agent is called with {"question": "Pay Ann"}
    Then the tool "transfer" never received a wrong-typed or missing value, or the agent saw an error for step 1 naming "<field>"
    And the run reached its final answer

    Examples:
      | args                                        | field     |
      | {"amount": 50}                              | recipient |
      | {"amount": "fifty", "recipient": "Ann"}     | amount    |
      | {"amount": 50, "recipient": ["Ann", "Bob"]} | recipient |
      | {"amount": "50", "recipient": "Ann"}        | amount    |
      | {"amount": 50.5, "recipient": "Ann"}        | amount    |
      | {"amount": null, "recipient": "Ann"}        | amount    |

  @req:ARGS-4
  Scenario: Tool args that fit the schema reach the tool unchanged
    Given the model replies
      | turn  | thought | tool     | args                               |
      | step  | send it | transfer | {"amount": 50, "recipient": "Ann"} |
      | final | done    |          | {"answer": "paid"}                 |
    When the agent is called with {"question": "Pay Ann"}
    Then the tool "transfer" ran exactly once, with {"amount": 50, "recipient": "Ann"}

  @req:ARGS-6
  Scenario: An argument the schema does not declare is refused, naming it, not dropped
    Given the model replies
      | turn  | thought | tool     | args                                               |
      | step  | send it | transfer | {"amount": 50, "recipient": "Ann", "memo": "rent"} |
      | final | give up |          | {"answer": "no"}                                   |
    When the agent is called with {"question": "Pay Ann"}
    Then the tool "transfer" never ran
    And the observation of step 1 is an error that names "memo"
    And the run reached its final answer

  @req:ARGS-5
  Scenario Outline: Tool args of any size or nesting reach the tool intact, or are refused saying why
    Given the tool "store" that takes the object "data"
    And the model's step calls "<tool>" with <payload>
    And the model replies
      | turn  | thought | tool | args             |
      | final | done    |      | {"answer": "ok"} |
    When the agent is called with {"question": "Store it"}
    Then the tool "<tool>" received it intact, or never ran and the agent was told why
    And the run reached its final answer

    Examples:
      | tool     | payload                                                  |
      | transfer | a recipient of 5000000 characters                        |
      | store    | an object nested 100000 levels deep                      |
      | store    | an object nested 5000 levels deep                        |
      | store    | an object nested 5000 levels deep after an escaped quote |
      | store    | arrays nested 5000 levels deep inside its object         |
      | store    | arrays nested 5000 levels deep, each beside an empty one |

  @req:ARGS-5 @capability:signature
  Scenario Outline: Under the JSON adapter, tool args of any size or nesting reach the tool intact, or are refused saying why
    Given the global adapter is "json"
    And the tool "store" that takes the object "data"
    And the model's step calls "<tool>" with <payload>
    And the model replies
      | turn  | thought | tool | args             |
      | final | done    |      | {"answer": "ok"} |
    When the agent is called with {"question": "Store it"}
    Then the tool "<tool>" received it intact, or never ran and the agent was told why
    And the prediction's "answer" is "ok"

    Examples:
      | tool     | payload                             |
      | transfer | a recipient of 5000000 characters   |
      | store    | an object nested 100000 levels deep |
