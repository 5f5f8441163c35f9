"""From a configuration to a running agent: its model, tool sources and ToolBox; resuming a saved run; which saved
servers a process trusts."""
