"""The tests here import the older Python streaming guide's classes by their Java paths."""
from api.jython import install_aliases

install_aliases()
