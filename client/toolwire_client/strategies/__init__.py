"""Ways to drive the same loop: plan-and-execute, workflows, reflection (review) and sub-agent options."""
