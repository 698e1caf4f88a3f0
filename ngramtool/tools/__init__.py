"""The work of the commands beside hashing: verify, export, explain, describe (inspect and vocab),
tokenize and bench, one module each; nothing is imported here."""
