"""The analyses: what the runner computes from the collected tables
(statistics, answers to hypotheses, seed plans and rounds). The registry of
analyses with their report sections is runner.experiments."""
