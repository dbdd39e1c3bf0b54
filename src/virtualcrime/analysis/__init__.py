"""Analysis over logs and scenarios: figures, metrics and reports (pure functions over records)."""
