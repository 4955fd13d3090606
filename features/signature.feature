Feature: Signature polymorphism
  A ReAct agent is built from a signature in any of its forms (an arrow string, a signature class,
  a signature value), uses its fields and instructions, and refuses a malformed one at once.

  Background:
    Given the tool "add" that adds the integers "a" and "b"

  @req:SIG-1 @smoke @capability:signature
  Scenario: An arrow-string signature takes its input and returns its output
    Given a ReAct agent with the signature "question -> answer" in string form
    And the model replies
      | turn    | thought  | tool   | args             |
      | step    | add them | add    | {"a": 2, "b": 3} |
      | final | done     | | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then the prediction's "answer" is "5"
    And every model call shows "What is 2 + 3?"

  @req:SIG-2 @capability:signature
  Scenario: A signature class gives the agent its fields and its instructions
    Given a ReAct agent with the signature "question -> answer" in class form
    And the signature's instructions are "Answer in French, as tersely as you can."
    And the model replies
      | turn    | thought | tool   | args               |
      | final | done    | | {"answer": "cinq"} |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then the prediction's "answer" is "cinq"
    And every model call shows "Answer in French, as tersely as you can."
    And every model call shows "What is 2 + 3?"

  @req:SIG-2 @capability:signature
  Scenario: A signature class's field descriptions reach the model
    Given a ReAct agent with the signature "question -> answer" in class form
    And the signature's field "question" is described as "Arithmetic to work out, in words"
    And the signature's field "answer" is described as "One number, written in digits"
    And the model replies
      | turn  | thought | tool | args            |
      | final | done    |      | {"answer": "5"} |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then every model call shows "Arithmetic to work out, in words"
    And the extraction call shows "One number, written in digits"

  @req:SIG-3 @capability:signature
  Scenario: A signature value built in code works like the string form
    Given a ReAct agent with the signature "question -> answer" in value form
    And the signature's instructions are "Use the tools before answering."
    And the model replies
      | turn    | thought  | tool   | args             |
      | step    | add them | add    | {"a": 4, "b": 5} |
      | final | done     | | {"answer": "9"}  |
    When the agent is called with {"question": "What is 4 + 5?"}
    Then the prediction's "answer" is "9"
    And the tool "add" ran exactly once, with {"a": 4, "b": 5}
    And every model call shows "Use the tools before answering."

  @req:SIG-4 @capability:signature
  Scenario: Several inputs and outputs in string form all reach the model and the prediction
    Given the library builds an agent from the signature "question -> answer" in string form, as SIG-1 requires
    And a ReAct agent with the signature "context, question -> answer, sources" in string form
    And the model replies
      | turn    | thought | tool   | args                                          |
      | final | done    | | {"answer": "Paris", "sources": "the atlas"}   |
    When the agent is called with {"context": "Facts about Europe.", "question": "Capital of France?"}
    Then the prediction's "answer" is "Paris"
    And the prediction's "sources" is "the atlas"
    And every model call shows "Facts about Europe."
    And every model call shows "Capital of France?"

  @req:SIG-4 @capability:signature
  Scenario: Several inputs and typed outputs in string form reach the prediction as declared
    Given the library builds an agent from the signature "question -> answer" in string form, as SIG-1 requires
    And a ReAct agent with the signature "context, question -> answer, count: int" in string form
    And the model replies
      | turn  | thought | tool | args                          |
      | final | done    |      | {"answer": "Paris", "count": 3} |
    When the agent is called with {"context": "Facts about Europe.", "question": "Capital of France, and how many letters in its river?"}
    Then the prediction's outputs are exactly {"answer": "Paris", "count": 3}
    And every model call shows "Facts about Europe."
    And every model call shows "Capital of France, and how many letters in its river?"

  @req:SIG-5 @capability:signature
  Scenario Outline: A malformed signature string fails at construction with a clear error
    Given the library builds an agent from the signature "question -> answer" in string form, as SIG-1 requires
    And a ReAct agent with the signature "<signature>" in string form
    When the agent is built
    Then construction fails with an error that quotes the signature or names "<names>"
    And the model was never called

    Examples:
      | signature                    | names    |
      | question answer              | ->       |
      | -> answer                    | input    |
      | question ->                  | output   |
      | question, question -> answer | question |
      | question -> question         | question |

  @req:SIG-5 @capability:signature
  Scenario: A signature value whose input and output share a name fails at construction
    Given the library builds an agent from the signature "question -> answer" in value form, as SIG-3 requires
    And a ReAct agent with the signature "question -> question" in value form
    When the agent is built
    Then construction fails with an error that quotes the signature or names "question"
    And the model was never called

  @req:SIG-6 @capability:signature
  Scenario: A call that lacks a required input fails before any model call
    Given a ReAct agent with the signature "context, question -> answer"
    When the agent is called with {"question": "What is 2 + 3?"}
    Then the call fails with a clear error that names "context"
    And the model was never called
    And no tool ran

  @req:SIG-6 @capability:signature
  Scenario Outline: The error names exactly the missing input, not one the call gave
    Given a ReAct agent with the signature "context, question -> answer"
    When the agent is called with <inputs>
    Then the call fails with a clear error that names "<missing>", not "<given>"
    And the model was never called

    Examples:
      | inputs                              | missing  | given    |
      | {"question": "What is 2 + 3?"}      | context  | question |
      | {"context": "Arithmetic."}          | question | context  |

  @req:SIG-6 @capability:signature
  Scenario: A call that lacks every input fails naming one of them
    Given a ReAct agent with the signature "context, question -> answer"
    When the agent is called with {}
    Then the call fails with a clear error that names "context" or "question"
    And the model was never called

  @req:SIG-6 @capability:signature
  Scenario: A call with a misspelled input fails naming the input it lacks
    Given a ReAct agent with the signature "context, question -> answer"
    When the agent is called with {"contexts": "Arithmetic.", "question": "What is 2 + 3?"}
    Then the call fails with a clear error that names "context"
    And the model was never called
