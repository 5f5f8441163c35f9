"""AG-UI: a toolwire run streamed to a front end as AG-UI events (docs/ag-ui.md). The events are made from the run's
own records (steps, pending calls) in the run store, so a stream can be replayed and followed from any process:
there is no second notion of a run. `ag_ui` (the ag-ui-protocol package) is imported only here, and only when the
endpoint is served."""
