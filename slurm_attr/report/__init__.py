"""Static HTML, text, JSON and CSV reports over stored diagnoses."""
