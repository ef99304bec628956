"""Build hook (all other metadata is in pyproject.toml): each recipe's
before/after fixtures are copied into the wheel as migrate/examples/<recipe>/,
so `tf-migrate explain` shows its example from an installed package while the
repository keeps one copy of them, under fixtures/."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

FIXTURES = Path(__file__).resolve().parent / "fixtures"


class BuildWithExamples(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "migrate" / "examples"
        for source in sorted(FIXTURES.glob("*/*.py")):
            if source.name.endswith((".before.py", ".after.py")):
                destination = target / source.parent.name / source.name
                self.mkpath(str(destination.parent))
                self.copy_file(str(source), str(destination))


setup(cmdclass={"build_py": BuildWithExamples})
