"""The per-user embedding host: one model process that every vault server asks for vectors."""
