"""The ``webshop`` family: WebShop's simulated store with BM25 search and the original reward."""

from environments.webshop.family import WebShopEnv

ENVIRONMENTS = (WebShopEnv(),)
