"""The run as data and its guards: the state, its exits, limits and budgets, message order, call ids, hooks,
the plan being followed."""
