"""pagewarden.proxy."""
