"""The ``webshop`` family: WebShop's simulated store with BM25 search and the original reward."""

from environments.webshop.family import WebShopEnv
from environments.webshop.store import StoreRenderer

ENVIRONMENTS = (WebShopEnv(),)
RENDERERS = {"webshop": StoreRenderer()}
