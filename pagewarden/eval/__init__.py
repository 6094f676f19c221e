"""pagewarden.eval."""
