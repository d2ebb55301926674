"""mdf_engine: a fast, safe execution engine for ModECI MDF models.

``load(path | dict | modeci_mdf.mdf.Model) -> Model``, ``save(model, path)``,
``Simulation(model, graph=None, backend="auto").run(steps=N, dt=DT)``.
"""

from .errors import MDFError
from .loader import load, save
from .model import Model
from .simulation import Simulation

__version__ = "0.1.0"
__all__ = ["MDFError", "Model", "Simulation", "load", "save", "__version__"]
