"""The defaults a user can change from the command line, in one home: the engine's turn limits and the bounds on
every model call. The models that enforce them (``EngineConfig``, ``RoleOptions``) take their defaults from here,
and the command line shows and passes these same numbers. Plain constants, so ``virtualcrime --help`` can read
them without loading anything."""

ATTACKER = "virtualcrime/scripted"  # the offline Attacker
REFEREE = "virtualcrime/rules"  # the offline Judge and World Manager; a World Manager not named is the Judge's model
MAX_TURNS = 60  # a run stops after this many turns
STALL_TURNS = 30  # ... or after this many turns without a new checkpoint
CALL_TIMEOUT = 120  # seconds one model call attempt may take
MAX_RETRIES = 3  # provider retries per model call (rate limits, server errors, timeouts)
MAX_ATTEMPTS = 3  # attempts per role call when the reply cannot be used (the error is shown to the model)
