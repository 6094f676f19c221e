"""The tests' throw-away PostgreSQL server is the one users get (`pagewarden.testing.PostgresServer`,
what ``pagewarden policies store postgres`` runs): Debian's PostgreSQL binaries, a data directory
in a temporary directory, a free TCP port on 127.0.0.1, password authentication; as root the
server runs as the ``postgres`` system user."""

from pagewarden.testing import PostgresServer, find_postgres_bindir

__all__ = ["PostgresServer", "find_bindir"]

find_bindir = find_postgres_bindir
