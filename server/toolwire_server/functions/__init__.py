"""A plain function as a tool: the context it may ask for, its argument model and schema, its output shape, and
how what it returns becomes a result. Both the server and a worker process use these."""
