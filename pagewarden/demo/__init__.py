"""pagewarden.demo."""
