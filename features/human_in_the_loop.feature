Feature: Human in the loop
  The agent can ask the user a question, and a tool marked interruptible never runs before a
  person approves it: the run pauses with an interrupt and resumes where it stopped, or the
  library asks an approval callback during the run. A pause answered twice, or replayed from its
  serialised form, never runs its call twice.

  Background:
    Given a ReAct agent with the signature "question -> answer"
    And the tool "add" that adds the integers "a" and "b"
    And the interruptible tool "delete_file" that takes the string "path"

  @req:HITL-1 @capability:ask-user
  Scenario: ask_to_user is a built-in tool unless disabled
    Given the agent can ask the user
    And the model replies
      | turn  | thought       | tool | args            |
      | final | I know it     |      | {"answer": "4"} |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the tools offered to the model are exactly "add, ask_to_user, delete_file"

  @req:HITL-1 @capability:ask-user
  Scenario: Disabling ask_to_user removes it from the allowed tool names
    Given the agent cannot ask the user
    And the model replies
      | turn  | thought       | tool | args            |
      | final | I know it     |      | {"answer": "4"} |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the tools offered to the model are exactly "add, delete_file"

  @req:HITL-1 @capability:ask-user
  Scenario: ask_to_user is offered by default, when the agent is built without saying
    Given the model replies
      | turn  | thought       | tool | args            |
      | final | I know it     |      | {"answer": "4"} |
    When the agent is called with {"question": "What is 2 + 2?"}
    Then the tools offered to the model are exactly "add, ask_to_user, delete_file"

  @req:HITL-2 @capability:ask-user
  Scenario: Asking the user raises an interrupt carrying the question and the saved state
    Given the agent can ask the user
    And the model replies
      | turn | thought          | tool        | args                                  |
      | step | I will add       | add         | {"a": 2, "b": 3}                      |
      | step | I need to ask    | ask_to_user | {"question": "Which units, metres?"} |
    When the agent is called with {"question": "How far?"}
    Then the call was interrupted with the question "Which units, metres?"
    And the interrupt's context holds the trajectory, the iteration and the inputs {"question": "How far?"}
    And the interrupt has an id

  @req:HITL-2 @capability:ask-user
  Scenario: Every interrupt gets its own id
    Given the agent can ask the user
    And the model replies
      | turn | thought | tool        | args                |
      | step | ask     | ask_to_user | {"question": "A?"}  |
    When the agent is called with {"question": "First"}
    And the model replies
      | turn | thought | tool        | args                |
      | step | ask     | ask_to_user | {"question": "B?"}  |
    And the agent is called again with {"question": "Second"}
    Then the two interrupts have different ids

  @req:HITL-2 @capability:ask-user
  Scenario: Two pauses for the same tool call get different ids
    Given the model replies
      | turn | thought   | tool        | args                    |
      | step | delete it | delete_file | {"path": "/tmp/report"} |
    When the agent is called with {"question": "Clean up"}
    And the model replies
      | turn | thought   | tool        | args                    |
      | step | delete it | delete_file | {"path": "/tmp/report"} |
    And the agent is called again with {"question": "Clean up"}
    Then the two interrupts have different ids

  @req:HITL-3 @capability:tool-approval
  Scenario: An interruptible tool does not run before approval
    Given the model replies
      | turn  | thought   | tool        | args                    |
      | step  | delete it | delete_file | {"path": "/tmp/report"} |
      | final | kept      |             | {"answer": "kept"}      |
    And the person will answer "no" when asked to approve
    When the agent is called with {"question": "Clean up"}
    Then the tool "delete_file" never ran
    And the approval request is the call "delete_file" with {"path": "/tmp/report"}

  @req:HITL-3 @capability:tool-approval
  Scenario: A plain tool runs without approval by default
    Given the model replies
      | turn  | thought    | tool | args             |
      | step  | I will add | add  | {"a": 2, "b": 3} |
      | final | done       |      | {"answer": "5"}  |
    When the agent is called with {"question": "What is 2 + 3?"}
    Then the tool "add" ran exactly once, with {"a": 2, "b": 3}
    And the run reached its final answer

  @req:HITL-4 @capability:tool-approval
  Scenario Outline: Approving runs the pending call exactly once
    Given the model replies
      | turn  | thought   | tool        | args                    |
      | step  | delete it | delete_file | {"path": "/tmp/report"} |
      | final | done      |             | {"answer": "gone"}      |
    And the person will answer "<answer>" when asked to approve
    When the agent is called with {"question": "Clean up"}
    And the person's answers are given
    Then the tool "delete_file" ran exactly once, with {"path": "/tmp/report"}
    And the run reached its final answer

    Examples:
      | answer |
      | yes    |
      | y      |

  @req:HITL-4 @capability:tool-approval
  Scenario Outline: Rejecting never runs the pending call and the agent chooses again
    Given the model replies
      | turn  | thought     | tool        | args                    |
      | step  | delete it   | delete_file | {"path": "/tmp/report"} |
      | step  | add instead | add         | {"a": 1, "b": 1}        |
      | final | done        |             | {"answer": "kept"}      |
    And the person will answer "<answer>" when asked to approve
    When the agent is called with {"question": "Clean up"}
    And the person's answers are given
    Then the tool "delete_file" never ran
    And the agent was told that the call of "delete_file" was not approved
    And the tool "add" ran exactly once, with {"a": 1, "b": 1}
    And the run reached its final answer

    Examples:
      | answer |
      | no     |
      | n      |

  @req:HITL-4 @capability:tool-approval
  Scenario: Free text is fed back to the agent as the user's answer
    Given the model replies
      | turn  | thought    | tool        | args                    |
      | step  | delete it  | delete_file | {"path": "/tmp/report"} |
      | final | I was told |             | {"answer": "kept"}      |
    And the person will answer "Keep the report, delete the drafts instead" when asked to approve
    When the agent is called with {"question": "Clean up"}
    And the person's answers are given
    Then the tool "delete_file" never ran
    And step call 2 shows "Keep the report, delete the drafts instead"

  @req:HITL-7 @capability:tool-approval @capability:approval-edit
  Scenario: An edit changes the call before it runs
    Given the model replies
      | turn  | thought   | tool        | args                    |
      | step  | delete it | delete_file | {"path": "/tmp/report"} |
      | final | done      |             | {"answer": "gone"}      |
    And the person will answer {"edit": {"name": "delete_file", "args": {"path": "/tmp/drafts"}}} when asked to approve
    When the agent is called with {"question": "Clean up"}
    And the person's answers are given
    Then the tool "delete_file" ran exactly once, with {"path": "/tmp/drafts"}

  @req:HITL-7 @capability:tool-approval @capability:approval-edit
  Scenario: An edit that names no tool never runs anything, and the person or the agent is told
    Given the model replies
      | turn  | thought   | tool        | args                    |
      | step  | delete it | delete_file | {"path": "/tmp/report"} |
      | final | done      |             | {"answer": "kept"}      |
    And the library may refuse the person's answer
    And the person will answer {"edit": {"name": "delete_everything", "args": {"path": "/"}}} when asked to approve
    When the agent is called with {"question": "Clean up"}
    And the person's answers are given
    Then no tool ran, and the person or the agent was told that "delete_everything" is no tool

  @req:HITL-7 @capability:tool-approval @capability:approval-edit
  Scenario Outline: An edit whose args break the tool's schema never reaches the tool with a wrong or missing value
    Given the interruptible tool "pay" that takes the integer "amount"
    And the model replies
      | turn  | thought | tool | args             |
      | step  | pay it  | pay  | {"amount": 50}   |
      | final | done    |      | {"answer": "ok"} |
    And the library may refuse the person's answer
    And the person will answer {"edit": {"name": "pay", "args": <args>}} when asked to approve
    When the agent is called with {"question": "Pay the bill"}
    And the person's answers are given
    Then the tool "pay" never received a wrong-typed or missing value from the edit, or the person or the agent was told of "amount"

    Examples:
      | args                |
      | {"amount": "fifty"} |
      | {"amount": 12.5}    |
      | {}                  |

  @req:HITL-5 @capability:tool-approval @capability:ask-user
  Scenario: The user's answer to ask_to_user is the observation of that step
    Given the agent can ask the user
    And the model replies
      | turn | thought       | tool        | args                                 |
      | step | I need to ask | ask_to_user | {"question": "Which units, metres?"} |
    When the agent is called with {"question": "How far?"}
    And the model replies
      | turn  | thought    | tool        | args                     |
      | step  | and round? | ask_to_user | {"question": "Rounded?"} |
      | final | noted      |             | {"answer": "5 km"}       |
    And the user answers "Kilometres, please"
    # "No" is also how a person rejects a call: to a question it is the answer, word for word.
    And the user answers "No"
    Then the trajectory's tool steps are
      | thought       | tool        | args                                 | observation        |
      | I need to ask | ask_to_user | {"question": "Which units, metres?"} | Kilometres, please |
      | and round?    | ask_to_user | {"question": "Rounded?"}             | No                 |
    And step call 2 shows "Kilometres, please"
    And the run reached its final answer

  @req:HITL-5 @capability:tool-approval
  Scenario: Resuming continues from the saved iteration, trajectory and inputs
    Given the agent's step cap is 3
    And the model replies
      | turn | thought    | tool        | args                    |
      | step | I will add | add         | {"a": 20, "b": 22}      |
      | step | delete it  | delete_file | {"path": "/tmp/report"} |
    When the agent is called with {"question": "Sum and clean"}
    And the model replies
      | turn    | thought | tool   | args               |
      | final | done    | | {"answer": "done"} |
    And the user answers "yes", as HITL-4 requires
    Then the tool "add" ran exactly once, with {"a": 20, "b": 22}
    And step call 3 shows "Sum and clean" and "42"
    And the trajectory's tool steps are
      | thought    | tool        | args                    | observation     |
      | I will add | add         | {"a": 20, "b": 22}      | 42              |
      | delete it  | delete_file | {"path": "/tmp/report"} | delete_file     |

  @req:HITL-5 @capability:tool-approval
  Scenario: Resuming keeps the budget the steps before the pause used
    Given the agent's step cap is 2
    And the agent does not raise on the step cap
    And the model replies
      | turn | thought    | tool        | args                    |
      | step | I will add | add         | {"a": 1, "b": 1}        |
      | step | delete it  | delete_file | {"path": "/tmp/report"} |
    And the model answers every extraction with {"answer": "done"}
    When the agent is called with {"question": "Sum and clean"}
    And the user answers "yes", as HITL-4 requires
    Then the tool "delete_file" ran exactly once, with {"path": "/tmp/report"}
    And call 2 made exactly 0 step calls

  @req:HITL-5 @capability:tool-approval @capability:per-call-cap
  Scenario: Resuming keeps the step cap given to the call and the steps used before the pause
    # The agent's own cap is the default of 10: a resume that forgets the call's cap of 3 goes on.
    Given the model replies
      | turn | thought    | tool        | args                    |
      | step | I will add | add         | {"a": 1, "b": 1}        |
      | step | delete it  | delete_file | {"path": "/tmp/report"} |
    And the model answers every step with tool "add" and args {"a": 2, "b": 2}
    And the model answers every extraction with {"answer": "done"}
    When the agent is called with {"question": "Sum and clean"} and a step cap of 3
    And the user answers "yes", as HITL-4 requires
    Then the tool "delete_file" ran exactly once, with {"path": "/tmp/report"}, as HITL-4 requires
    And call 2 made exactly 1 step call

  @req:HITL-6 @capability:tool-approval
  Scenario: Resuming the same interrupt twice never runs the tool twice
    Given the model replies
      | turn  | thought   | tool        | args                    |
      | step  | delete it | delete_file | {"path": "/tmp/report"} |
      | final | done      |             | {"answer": "gone"}      |
    When the agent is called with {"question": "Clean up"}
    And the user answers "yes", as HITL-4 requires
    And the user answers "yes" to the same interrupt again
    Then the tool "delete_file" ran exactly once, with {"path": "/tmp/report"}

  @req:HITL-6 @capability:tool-approval
  Scenario: Answering a pause again after its resumed run paused again never runs a call twice
    Given the model replies
      | turn | thought   | tool        | args                    |
      | step | delete it | delete_file | {"path": "/tmp/report"} |
      | step | and this  | delete_file | {"path": "/tmp/drafts"} |
    When the agent is called with {"question": "Clean up"}
    And the user answers "yes", as HITL-4 requires
    Then the resumed run paused again
    When the user answers "yes" to the first interrupt again
    Then the tool "delete_file" ran exactly once, with {"path": "/tmp/report"}

  @req:HITL-6 @capability:tool-approval
  Scenario: A pause answered through another agent is refused
    Given the model replies
      | turn  | thought   | tool        | args                    |
      | step  | delete it | delete_file | {"path": "/tmp/report"} |
      | step  | delete it | delete_file | {"path": "/tmp/drafts"} |
      | final | done      |             | {"answer": "gone"}      |
    When the agent is called with {"question": "Clean up"}
    # The other agent differs by its name alone: a library tells its agents apart by name, if at all.
    And the user answers "yes" through another agent named "auditor"
    Then the answer was refused
    And the tool "delete_file" never ran
    # A refusal counts only from a library that resumes its own pauses: here, a new one.
    When the agent is called again with {"question": "Clean up the drafts"}
    And the user answers "yes", as HITL-4 requires
    Then the tool "delete_file" ran exactly once, with {"path": "/tmp/drafts"}, as HITL-4 requires

  @req:HITL-8 @capability:tool-approval @capability:durable-approvals
  Scenario: Replaying the answer to a serialised pause whose call already ran never runs it again
    Given the model replies
      | turn  | thought   | tool        | args                    |
      | step  | delete it | delete_file | {"path": "/tmp/report"} |
      | final | done      |             | {"answer": "gone"}      |
    When the agent is called with {"question": "Clean up"}
    And the user answers "yes", as HITL-4 requires
    And the user answers "yes" to the same interrupt again
    Then the tool "delete_file" ran exactly once, with {"path": "/tmp/report"}

  @req:TRJ-2 @capability:tool-approval
  Scenario: A pause's trajectory is a snapshot
    Given the model replies
      | turn | thought    | tool        | args                    |
      | step | I will add | add         | {"a": 2, "b": 3}        |
      | step | delete it  | delete_file | {"path": "/tmp/report"} |
    When the agent is called with {"question": "Sum and clean"}
    And the caller mutates what the call returned
    And the model replies
      | turn  | thought | tool | args               |
      | final | done    |      | {"answer": "done"} |
    And the user answers "yes", as HITL-4 requires
    Then no model call of call 2 shows the caller's mutation
    And the tool "delete_file" ran exactly once, with {"path": "/tmp/report"}
