"""The web UI (``virtualcrime serve``): people play tasks as the Attacker, researchers replay logged runs and rate
the Judge's and World Manager's quality on key turns. The top layer: it uses the engine, the harness (to write
and read logs) and the analysis (review ratings); nothing below imports it."""
