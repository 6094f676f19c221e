"""pagewarden.judge."""
