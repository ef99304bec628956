"""`python -m migrate` is `tf-migrate`."""
from .cli import main

main()
