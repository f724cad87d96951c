"""Planning an experiment's seeds: how many seeds each hypothesis needs
from a pilot's runs (seed_plan, with the load its runs put on the relays,
plan_load), the seeds in rounds that the whole family of hypotheses needs
(joint_plan), and running seeds in rounds until the hypotheses are answered
(seed_rounds).

A stage above the analyses, whose results (answers, statistics, power) it
plans from; the report renders a plan, and the workflow runs the rounds."""
