"""pagewarden.llm."""
