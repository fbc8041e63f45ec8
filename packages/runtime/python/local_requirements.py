"""What an image build installs for graphx.json `dependencies` before the app's code is in the image.

Run by the dependency layer of a revision image (src/containers/revisionBuildContext.ts) with the layer's inputs:
`dependencies.json` (the list as written) and, under `app/`, the manifests of each local folder. Prints pip
requirement lines: requirement strings as they are, a folder's requirements.txt (`-r`), the `[project]
dependencies` of its pyproject.toml. The folders themselves are not installed: the running revision's own code is put
in front of the environment's site-packages (pythonImportRoots), so the layer depends only on the manifests. A folder
that only a setup.py describes is staged whole and installed as a package.
"""

import json
import os
import sys
import tomllib


def lines_for(base: str, dependency: str) -> list[str]:
    if not (dependency == "." or dependency.startswith(("./", "../", "/"))):
        return [dependency]
    folder = os.path.normpath(os.path.join(base, dependency))
    lines = []
    if os.path.exists(os.path.join(folder, "requirements.txt")):
        lines.append(f"-r {os.path.join(folder, 'requirements.txt')}")
    pyproject = os.path.join(folder, "pyproject.toml")
    if os.path.exists(pyproject):
        with open(pyproject, "rb") as file:
            project = tomllib.load(file).get("project", {})
        if "dependencies" in project.get("dynamic", []):
            print(f"warning: {dependency}: dynamic dependencies are not installed", file=sys.stderr)
        lines.extend(project.get("dependencies", []))
    elif os.path.exists(os.path.join(folder, "setup.py")):
        lines.append(folder)
    return lines


def main() -> None:
    inputs = sys.argv[1]
    with open(os.path.join(inputs, "dependencies.json")) as file:
        dependencies = json.load(file)
    for dependency in dependencies:
        for line in lines_for(os.path.join(inputs, "app"), dependency):
            print(line)


if __name__ == "__main__":
    main()
