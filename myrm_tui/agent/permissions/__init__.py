"""Who may do what: the approval policy, allow/deny rules, the destructive-command seatbelt and
the paths no tool may write."""
