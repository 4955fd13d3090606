Feature: Output extraction
  When the loop ends, one extraction call gets the original inputs plus the trajectory, and the
  prediction holds the signature's outputs as that call produced them.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"

  @req:EXT-1 @capability:signature
  Scenario: Extraction receives the inputs and the whole trajectory
    Given the model replies
      | turn    | thought               | tool   | args                   |
      | step    | I will add the two    | add    | {"a": 1234, "b": 4321} |
      | final | I have the sum now    | | {"answer": "5555"}     |
    When the agent is called with {"question": "What is 1234 + 4321?"}
    Then the extraction call shows "What is 1234 + 4321?" and "I will add the two" and "5555"
    And the prediction's "answer" is "5555"

  @req:EXT-1 @capability:signature
  Scenario: The outputs come from the extraction call, not from a step
    Given the model replies
      | turn    | thought                   | tool   | args                |
      | step    | the answer is surely 99   | finish | {"answer": "99"}    |
      | extract |                           |        | {"answer": "4"}     |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the prediction's "answer" is "4"
    And the extraction call is the last model call

  @req:EXT-2 @capability:max-steps-extract
  Scenario: Extraction runs over the partial trajectory after the step cap
    Given the agent's step cap is 2
    And the agent extracts its outputs on the step cap
    And the model replies
      | turn    | thought    | tool | args                   |
      | step    | first sum  | add  | {"a": 1000, "b": 234}  |
      | step    | second sum | add  | {"a": 4000, "b": 321}  |
      | extract |            |      | {"answer": "partial"}  |
    When the agent is called with {"question": "Add everything"}
    Then the prediction's "answer" comes from the extraction reply "partial"
    And the extraction call shows "Add everything" and "1234" and "4321"
    And the model received 2 step calls and 1 extraction call

  @req:EXT-1 @capability:signature
  Scenario: The prediction holds each output as the type its signature declares
    Given a ReAct agent with the signature "question -> count: int, ratio: float, ok: bool, things: list, note" in class form
    And the model replies
      | turn    | thought | tool   | args                                                                          |
      | final | done    | | {"count": 4, "ratio": 0.5, "ok": true, "things": ["a", 1], "note": "fine"} |
    When the agent is called with {"question": "Count them"}
    Then the prediction's outputs are exactly {"count": 4, "ratio": 0.5, "ok": true, "things": ["a", 1], "note": "fine"}

  @req:EXT-1 @capability:signature
  Scenario: An arrow string's outputs hold the types it declares
    Given the library builds an agent from the signature "question -> answer" in string form, as SIG-1 requires
    And a ReAct agent with the signature "question -> count: int, ratio: float, ok: bool, things: list, note" in string form
    And the model replies
      | turn  | thought | tool | args                                                                          |
      | final | done    |      | {"count": 4, "ratio": 0.5, "ok": true, "things": ["a", 1], "note": "fine"} |
    When the agent is called with {"question": "Count them"}
    Then the prediction's outputs are exactly {"count": 4, "ratio": 0.5, "ok": true, "things": ["a", 1], "note": "fine"}

  @req:EXT-1 @capability:signature
  Scenario: A text output the model writes as a JSON number is that number's text
    Given a ReAct agent with the signature "question -> answer" in class form
    And the global adapter is "json"
    And the model replies
      | turn  | thought | tool | args           |
      | final | done    |      | {"answer": 42} |
    When the agent is called with {"question": "What is six times seven?"}
    Then the prediction's outputs are exactly {"answer": "42"}

  @req:EXT-1 @capability:signature
  Scenario Outline: A float output the model writes as a whole number is that number
    Given a ReAct agent with the signature "question -> ratio: float" in class form
    And the global adapter is "<adapter>"
    And the model replies
      | turn  | thought | tool | args         |
      | final | done    |      | {"ratio": 2} |
    When the agent is called with {"question": "How many times bigger?"}
    Then the prediction's outputs are exactly {"ratio": 2}

    Examples:
      | adapter |
      | chat    |
      | json    |

  @req:EXT-1 @capability:signature
  Scenario Outline: A typed output that does not parse is asked for again or refused, naming the field
    Given a ReAct agent with the signature "question -> count: int" in class form
    And the global adapter is "<adapter>"
    And the model replies
      | turn  | thought | tool | args              |
      | final | done    |      | {"count": "four"} |
    And the model answers every extraction with {"count": 4}
    And the model answers every step with tool "finish" and args {}
    When the agent is called with {"question": "How many legs has a dog?"}
    Then either the prediction's outputs are exactly {"count": 4} or the call fails with a clear error that names "count"

    Examples:
      | adapter |
      | chat    |
      | json    |

  @req:EXT-1 @capability:signature
  Scenario: A list output nested a hundred levels deep is handed over intact or refused, naming the field
    Given a ReAct agent with the signature "question -> things: list" in class form
    And the model's final answer writes "things" as a list nested 100 levels deep
    When the agent is called with {"question": "Nest them"}
    Then either the prediction's outputs are exactly as written or the call fails with a clear error that names "things"
