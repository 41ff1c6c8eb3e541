"""A short pytfe session, for the proxy test (suite/tests/proxy.rs).

Talks to TFE_ADDRESS with TFE_TOKEN (both from the environment; the token is never printed):
makes an organization, reads, updates and lists it, makes a workspace in it and reads it,
then deletes the organization. Prints one line per step and exits non-zero on an error.
"""

import os
import sys

from pytfe import TFEClient, TFEConfig
from pytfe.models.organization import OrganizationCreateOptions, OrganizationUpdateOptions
from pytfe.models.workspace import WorkspaceCreateOptions


def main() -> int:
    name = os.environ.get("CONFORM_ORG", "pytfe-proxy")
    client = TFEClient(TFEConfig(address=os.environ["TFE_ADDRESS"], token=os.environ["TFE_TOKEN"], max_retries=0))
    org = client.organizations.create(OrganizationCreateOptions(name=name, email=f"{name}@example.com"))
    print(f"created organization {org.name}")
    org = client.organizations.read(name)
    print(f"read organization {org.name}")
    client.organizations.update(name, OrganizationUpdateOptions(email=f"{name}-2@example.com"))
    print("updated organization")
    names = [o.name for o in client.organizations.list()]
    print(f"listed {len(names)} organizations")
    ws = client.workspaces.create(name, WorkspaceCreateOptions(name=f"{name}-ws"))
    print(f"created workspace {ws.id}")
    ws = client.workspaces.read(f"{name}-ws", organization=name)
    print(f"read workspace {ws.id}")
    client.organizations.delete(name)
    print("deleted organization")
    return 0


if __name__ == "__main__":
    sys.exit(main())
