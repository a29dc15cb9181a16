"""Agent Framework's own memories as the app runs them beside the facts (issue 18), each an
`AgentMemory` the runtime adds to both agents and the one forget reaches."""
