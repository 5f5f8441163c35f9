"""The model's context as a budget: what each request is sent of the run (run/context_view.py), the results cleared
and the turns summarised to keep it within `RunConfig.context_budget`, and where its tokens went."""
