"""Fix recipes, one module each; see migrate.recipe for the API."""
