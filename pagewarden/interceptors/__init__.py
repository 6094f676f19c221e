"""pagewarden.interceptors."""
