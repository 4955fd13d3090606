Feature: Adapter precedence
  The globally configured adapter formats and parses every internal call; an adapter given to the
  agent wins over it, for every internal call, without leaking into the global configuration or
  into other agents.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"
    And the model replies
      | turn    | thought    | tool   | args             |
      | step    | I will add | add    | {"a": 2, "b": 3} |
      | final | done       | | {"answer": "5"}  |

  @req:ADP-1 @capability:signature @capability:adapters
  Scenario Outline: The global adapter formats and parses every internal call
    Given the global adapter is "<adapter>"
    When the agent is called with {"question": "What is 2 + 3?"}
    Then every model call used the "<adapter>" format
    And every model call shows "What is 2 + 3?"
    And the extraction call shows "5"
    And the global adapter is still "<adapter>"
    And the prediction's "answer" is "5"
    And the tool "add" ran exactly once, with {"a": 2, "b": 3}

    Examples:
      | adapter |
      | chat    |
      | json    |

  @req:ADP-2 @capability:signature @capability:adapters
  Scenario Outline: The agent's own adapter wins over the global one for every internal call
    Given the global adapter is "<global>"
    And a first agent without its own adapter uses the "<global>" format, as ADP-1 requires
    And the agent's adapter is "<own>"
    When the agent is called with {"question": "What is 2 + 3?"}
    Then every model call used the "<own>" format
    And every model call shows "What is 2 + 3?"
    And the prediction's "answer" is "5"

    Examples:
      | global | own  |
      | chat   | json |
      | json   | chat |

  @req:ADP-3 @capability:signature @capability:adapters
  Scenario: The agent's own adapter leaves the global adapter and other agents alone
    Given the global adapter is "chat"
    And the library builds an agent with the adapter "json" of its own, as ADP-2 requires
    And the agent's adapter is "json"
    When the agent is called with {"question": "What is 2 + 3?"}
    Then every model call used the "json" format
    And the global adapter is still "chat"
    And a second agent without its own adapter uses the "chat" format

  @req:ADP-3 @capability:signature @capability:adapters
  Scenario: Agents with different adapters running at the same time each keep their own
    Given the global adapter is "chat"
    And the library builds an agent with the adapter "json" of its own, as ADP-2 requires
    When 8 agents with their own "json" adapter and 8 agents without one run at the same time
    Then every concurrent run used only its own agent's format and got its own answer
