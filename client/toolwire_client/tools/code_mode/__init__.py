"""Code mode: the model writes one script over the run's tools instead of one model turn per call.

`layer.py` offers `run_code` (its description: the tools as typed Python signatures, `signatures.py`); `source.py`
runs a call of it as a child run of the calling run, every tool call of the script a call of that run through the
loop's call pipeline; `sandbox.py` drives the script in Monty (`pydantic-monty`, the `code` extra), saving the
interpreter's snapshot before each batch of calls is sent, so the script survives a crash and a pause for a person;
`replay.py` runs a script's run again over its recorded results (`toolwire replay SCRIPT_RUN`)."""
