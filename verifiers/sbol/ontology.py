"""The ontology terms circuits use (Sequence Ontology, Systems Biology Ontology), offline.

pySBOL3 exports these as constants; ``tyto`` (used by sbol-utilities and many examples) looks
terms up over the network, which the sandbox does not have. The table below answers those
look-ups instead (``execution.py`` installs it as a small ``tyto`` stand-in), and gives the
trusted checks readable names for their messages.
"""

from __future__ import annotations

SO = "https://identifiers.org/SO:"
SBO = "https://identifiers.org/SBO:"

SO_TERMS: dict[str, str] = {
    "promoter": SO + "0000167",
    "ribosome_entry_site": SO + "0000139",
    "CDS": SO + "0000316",
    "terminator": SO + "0000141",
    "engineered_region": SO + "0000804",
    "engineered_gene": SO + "0000280",
    "operator": SO + "0000057",
    "gene": SO + "0000704",
    "mRNA": SO + "0000234",
    "insulator": SO + "0000627",
    "ribozyme": SO + "0000374",
    "sequence_feature": SO + "0000110",
    "origin_of_replication": SO + "0000296",
    "plasmid": SO + "0000155",
    "transcription_factor": SO + "0003700",
    "circular": SO + "0000988",
    "linear": SO + "0000987",
    "single_stranded": SO + "0000984",
    "double_stranded": SO + "0000985",
    "forward": SO + "0001030",
    "reverse": SO + "0001031",
}
"""Sequence Ontology labels as tyto spells them (``tyto.SO.promoter``)."""

SBO_TERMS: dict[str, str] = {
    "inhibition": SBO + "0000169",
    "stimulation": SBO + "0000170",
    "genetic_production": SBO + "0000589",
    "control": SBO + "0000168",
    "degradation": SBO + "0000179",
    "non_covalent_binding": SBO + "0000177",
    "biochemical_reaction": SBO + "0000176",
    "inhibitor": SBO + "0000020",
    "inhibited": SBO + "0000642",
    "stimulator": SBO + "0000459",
    "stimulated": SBO + "0000643",
    "template": SBO + "0000645",
    "product": SBO + "0000011",
    "reactant": SBO + "0000010",
    "modifier": SBO + "0000019",
    "modified": SBO + "0000644",
    "promoter": SBO + "0000598",
    "deoxyribonucleic_acid": SBO + "0000251",
    "ribonucleic_acid": SBO + "0000250",
    "protein": SBO + "0000252",
    "simple_chemical": SBO + "0000247",
    "functional_entity": SBO + "0000241",
    "non_covalent_complex": SBO + "0000253",
}
"""Systems Biology Ontology labels as tyto spells them (``tyto.SBO.inhibition``)."""

ALIASES: dict[str, dict[str, str]] = {
    "SO": {"RBS": "ribosome_entry_site", "cds": "CDS"},
    "SBO": {"DNA": "deoxyribonucleic_acid", "RNA": "ribonucleic_acid"},
}
"""Other names examples use for the same terms."""

# What the checks call the terms in their messages.
PROMOTER, RBS = SO_TERMS["promoter"], SO_TERMS["ribosome_entry_site"]
CDS, TERMINATOR = SO_TERMS["CDS"], SO_TERMS["terminator"]
ENGINEERED_REGION = SO_TERMS["engineered_region"]
DNA, PROTEIN = SBO_TERMS["deoxyribonucleic_acid"], SBO_TERMS["protein"]
SIMPLE_CHEMICAL = SBO_TERMS["simple_chemical"]
FUNCTIONAL_ENTITY = SBO_TERMS["functional_entity"]
PRODUCTION = SBO_TERMS["genetic_production"]
INHIBITION, STIMULATION = SBO_TERMS["inhibition"], SBO_TERMS["stimulation"]
TEMPLATE, PRODUCT = SBO_TERMS["template"], SBO_TERMS["product"]
INHIBITOR, INHIBITED = SBO_TERMS["inhibitor"], SBO_TERMS["inhibited"]
STIMULATOR, STIMULATED = SBO_TERMS["stimulator"], SBO_TERMS["stimulated"]
PRECEDES = "http://sbols.org/v3#precedes"
IUPAC_DNA = "https://identifiers.org/edam:format_1207"

PART_ROLES: dict[str, str] = {
    PROMOTER: "promoter",
    RBS: "RBS",
    CDS: "CDS",
    TERMINATOR: "terminator",
}
"""The four roles of a transcription unit's parts, by URI."""


def label(uri: str) -> str:
    """A readable name for a term (the table's label, else the URI itself)."""
    for prefix, table in (("SO", SO_TERMS), ("SBO", SBO_TERMS)):
        for name, term in table.items():
            if term == uri:
                return name if prefix == "SO" else name.replace("_", " ")
    return uri
