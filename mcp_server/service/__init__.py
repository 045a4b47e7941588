"""memdir's operations over the project and user vaults, shared by every face: the app, the service, privacy."""
