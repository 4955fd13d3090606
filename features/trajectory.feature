Feature: Trajectory return
  The prediction carries the trajectory: per step the thought, tool name, tool args and
  observation, in the order they ran, as a snapshot the caller owns.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"
    And the tool "search" that returns "Paris is the capital of France."

  @req:TRJ-1
  Scenario: The prediction carries every step's thought, tool, args and observation
    Given the model replies
      | turn    | thought      | tool   | args                           |
      | step    | I will add   | add    | {"a": 1234, "b": 4321}         |
      | step    | Look it up   | search | {"query": "capital of France"} |
      | final | done         | | {"answer": "Paris"}            |
    When the agent is called with {"question": "Sum, then capital?"}
    Then the trajectory's tool steps are
      | thought    | tool   | args                           | observation                     |
      | I will add | add    | {"a": 1234, "b": 4321}         | 5555                            |
      | Look it up | search | {"query": "capital of France"} | Paris is the capital of France. |

  @req:TRJ-2
  Scenario: Mutating a returned trajectory changes neither the agent nor its next run
    Given the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 2, "b": 3} |
      | final | done       | | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    And the caller mutates what the call returned
    And the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 4, "b": 4} |
      | final | done       | | {"answer": "8"}  |
    And the agent is called again with {"question": "What is 4 + 4?"}
    Then no model call of call 2 shows the caller's mutation
    And the trajectory's tool steps are
      | thought    | tool | args             | observation |
      | I will add | add  | {"a": 4, "b": 4} | 8           |

  @req:TRJ-3
  Scenario: After finish the steps appear in the order they ran, one observation each
    Given the model replies
      | turn    | thought | tool   | args                           |
      | step    | one     | add    | {"a": 1, "b": 10}              |
      | step    | two     | search | {"query": "capital of France"} |
      | step    | three   | add    | {"a": 2, "b": 20}              |
      | final | done    | | {"answer": "ok"}               |
    When the agent is called with {"question": "Do three things"}
    Then the trajectory's tool steps are
      | thought | tool   | args                           | observation                     |
      | one     | add    | {"a": 1, "b": 10}              | 11                              |
      | two     | search | {"query": "capital of France"} | Paris is the capital of France. |
      | three   | add    | {"a": 2, "b": 20}              | 22                              |

  @req:TRJ-3
  Scenario: After the step cap the steps appear in the order they ran, one observation each
    Given the agent's step cap is 3
    And the model answers every extraction with {"answer": "partial"}
    And the model replies
      | turn | thought | tool   | args                           |
      | step | one     | add    | {"a": 3, "b": 30}              |
      | step | two     | add    | {"a": 4, "b": 40}              |
      | step | three   | search | {"query": "capital of France"} |
    When the agent is called with {"question": "Do three things"}
    Then the trajectory's tool steps are
      | thought | tool   | args                           | observation                     |
      | one     | add    | {"a": 3, "b": 30}              | 33                              |
      | two     | add    | {"a": 4, "b": 40}              | 44                              |
      | three   | search | {"query": "capital of France"} | Paris is the capital of France. |

  @req:TRJ-3
  Scenario: After repeated tool errors the steps appear in the order they ran, one observation each
    Given the tool "explode" that raises ValueError "the disk is on fire"
    And the agent's step cap is 4
    And the model answers every extraction with {"answer": "sorry"}
    And the model replies
      | turn | thought | tool    | args              |
      | step | one     | add     | {"a": 5, "b": 50} |
      | step | two     | explode | {"query": "a"}    |
      | step | three   | explode | {"query": "b"}    |
      | step | four    | explode | {"query": "c"}    |
    When the agent is called with {"question": "Do four things"}
    Then call 1 did not crash on the raising tool, as ERR-1 requires
    And the trajectory's tool steps are
      | thought | tool    | args              | observation |
      | one     | add     | {"a": 5, "b": 50} | 55          |
      | two     | explode | {"query": "a"}    |             |
      | three   | explode | {"query": "b"}    |             |
      | four    | explode | {"query": "c"}    |             |
