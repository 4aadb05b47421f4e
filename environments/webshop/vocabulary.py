# ruff: noqa: E501 - the product-type table reads best one type per line
"""The synthetic catalogue's word lists: WebShop's five categories, product types, attributes,
option groups and brands, modelled on the real scrape (Amazon titles, category paths, the
instruction attributes the crowd-workers picked)."""

from __future__ import annotations

from dataclasses import dataclass

CATEGORIES = ("beauty", "food", "fashion", "furniture", "electronics")


@dataclass(frozen=True)
class ProductType:
    """One kind of product: what its titles end with, how it was scraped, where it is filed."""

    category: str
    noun: str  # the title's head noun phrase, e.g. "Essential Oil"
    queries: tuple[str, ...]  # scrape queries (the reward's query match compares these)
    path: tuple[str, ...]  # product_category levels below the category's root
    price: tuple[float, float]
    descriptors: tuple[str, ...]  # title words specific to the type
    options: tuple[str, ...]  # option group names, drawn from OPTION_VALUES


ROOTS = {
    "beauty": "Beauty & Personal Care",
    "food": "Grocery & Gourmet Food",
    "fashion": "Clothing, Shoes & Jewelry",
    "furniture": "Home & Kitchen",
    "electronics": "Electronics",
}

ATTRIBUTES = {
    "beauty": (
        "long lasting", "paraben free", "cruelty free", "natural ingredients", "sulfate free",
        "easy to use", "dermatologist tested", "fragrance free", "alcohol free", "travel size",
        "high quality", "non toxic", "vegan", "oil free", "sensitive skin", "dry skin",
        "hair growth", "anti aging", "seed oil", "argan oil", "tea tree", "hyaluronic acid",
    ),
    "food": (
        "gluten free", "non gmo", "sugar free", "low carb", "keto friendly", "low calorie",
        "high protein", "usda organic", "plant based", "dairy free", "individually wrapped",
        "ready to eat", "caffeine free", "kosher certified", "grass fed", "low sodium",
        "natural flavors", "artificial colors", "resealable bag", "great gift", "shelf stable",
    ),
    "fashion": (
        "machine wash", "slim fit", "relaxed fit", "non slip", "rubber sole", "quick drying",
        "moisture wicking", "hand wash", "elastic waistband", "long sleeve", "short sleeve",
        "button closure", "lace up", "comfortable fit", "polyester spandex", "cotton blend",
        "arch support", "memory foam", "high waist", "daily wear", "classic fit", "ankle strap",
    ),
    "furniture": (
        "easy assembly", "easy clean", "storage space", "living room", "solid wood",
        "space saving", "heavy duty", "mid century", "metal frame", "bedroom furniture",
        "wood finish", "non slip", "high density", "lumbar support", "height adjustable",
        "engineered wood", "steel frame", "dining room", "home office", "faux leather",
    ),
    "electronics": (
        "fast charging", "high speed", "noise cancelling", "water resistant", "long battery",
        "hands free", "easy install", "plug play", "usb port", "wireless charging",
        "dual band", "high definition", "aluminum alloy", "heavy duty", "carrying case",
        "stereo sound", "compact size", "led light", "shock absorption", "touch control",
    ),
}  # fmt: skip

OPTION_VALUES = {
    "color": (
        "black", "white", "navy blue", "red", "grey", "beige", "brown", "green", "pink",
        "light blue", "dark green", "khaki", "burgundy", "olive", "purple", "yellow", "silver",
        "gold", "rose gold", "ivory", "teal", "coral", "charcoal", "wine red", "sky blue",
    ),
    "apparel size": ("x-small", "small", "medium", "large", "x-large", "xx-large", "3x-large"),
    "shoe size": ("6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "12"),
    "scent": (
        "lavender", "rose", "unscented", "eucalyptus", "coconut vanilla", "citrus", "jasmine",
        "sandalwood", "peppermint", "fresh linen", "cherry blossom", "ocean breeze",
    ),
    "beauty size": (
        "1 fl oz (pack of 1)", "2 fl oz (pack of 1)", "4 fl oz (pack of 1)", "8 fl oz",
        "16 fl oz", "3.4 fl oz", "pack of 2", "pack of 3", "0.5 ounce",
    ),
    "flavor name": (
        "original", "vanilla", "chocolate", "strawberry", "sea salt", "honey", "peanut butter",
        "mixed berry", "cinnamon", "spicy", "hickory smoked", "matcha", "mango", "apple",
    ),
    "food size": (
        "12 ounce (pack of 1)", "8 ounce (pack of 2)", "pack of 6", "pack of 12", "1 pound",
        "2 pound", "16 ounce", "24 count", "4.5 ounce (pack of 4)", "32 fl oz",
    ),
    "furniture size": (
        "24 inch", "30 inch", "36 inch", "48 inch", "twin", "full", "queen", "king",
        "2 tier", "3 tier", "4 tier", "set of 2", "set of 4",
    ),
    "style": (
        "modern", "farmhouse", "industrial", "classic", "with drawer", "without drawer",
        "2 pack", "3 pack", "single", "pro", "basic", "deluxe",
    ),
    "cable size": ("3 ft", "6 ft", "10 ft", "1 ft", "6.6 ft", "3.3 ft (2 pack)"),
    "capacity": ("5000mah", "10000mah", "20000mah", "26800mah", "32gb", "64gb", "128gb"),
}  # fmt: skip
"""Option values. The names the store shows drop the prefix before ' size' (see option_name)."""


def option_name(group: str) -> str:
    """The option name as shown: 'apparel size' -> 'size'; others unchanged."""
    return "size" if group.endswith(" size") else group


def _t(  # noqa: PLR0917 - a compact row constructor for the table below
    category: str, noun: str, queries: str, path: str, price: tuple[float, float],
       descriptors: str, options: str) -> ProductType:  # fmt: skip
    return ProductType(
        category,
        noun,
        tuple(q.strip() for q in queries.split("|")),
        tuple(p.strip() for p in path.split(">")),
        price,
        tuple(d.strip() for d in descriptors.split("|")),
        tuple(o.strip() for o in options.split("|") if o.strip()),
    )


PRODUCT_TYPES = (
    _t("beauty", "Essential Oil", "essential oils|aromatherapy oil", "Fragrance > Essential Oils", (5, 30), "100% Pure|Therapeutic Grade|for Diffuser|Aromatherapy", "scent|beauty size"),
    _t("beauty", "Shampoo", "shampoo|hair shampoo", "Hair Care > Shampoo & Conditioner > Shampoos", (6, 35), "Moisturizing|Volumizing|Clarifying|for Curly Hair", "scent|beauty size"),
    _t("beauty", "Conditioner", "conditioner|hair conditioner", "Hair Care > Shampoo & Conditioner > Conditioners", (6, 32), "Deep|Leave-In|Repairing|for Damaged Hair", "beauty size"),
    _t("beauty", "Face Moisturizer", "face moisturizer|facial cream", "Skin Care > Face > Creams & Moisturizers", (9, 60), "Daily|Hydrating|Night|Lightweight", "beauty size"),
    _t("beauty", "Lipstick", "lipstick|matte lipstick", "Makeup > Lips > Lipstick", (5, 28), "Matte|Creamy|Velvet|Waterproof", "color"),
    _t("beauty", "Nail Polish", "nail polish|gel nail polish", "Foot, Hand & Nail Care > Nail Art & Polish > Nail Polish", (4, 20), "Gel|Quick Dry|Glossy|Chip Resistant", "color|beauty size"),
    _t("beauty", "Body Lotion", "body lotion|hand and body lotion", "Skin Care > Body > Lotions", (5, 30), "Shea Butter|Nourishing|Whipped|Soothing", "scent|beauty size"),
    _t("beauty", "Makeup Brush Set", "makeup brushes|brush set", "Tools & Accessories > Makeup Brushes & Tools > Brush Sets", (8, 45), "Professional|Synthetic|Kabuki|with Case", "color|style"),
    _t("beauty", "Eyeshadow Palette", "eyeshadow palette|eye shadow", "Makeup > Eyes > Eyeshadow", (7, 48), "Shimmer|Nude|Smoky|Highly Pigmented", "style"),
    _t("beauty", "Hair Mask", "hair mask|hair treatment", "Hair Care > Styling Products > Treatments", (8, 40), "Repair|Protein|Keratin|Intensive", "scent|beauty size"),
    _t("beauty", "Sunscreen", "sunscreen|spf sunscreen", "Skin Care > Sunscreens & Tanning Products > Sunscreens", (7, 36), "SPF 50|Mineral|Broad Spectrum|Reef Safe", "beauty size"),
    _t("food", "Coffee Beans", "coffee beans|whole bean coffee", "Beverages > Coffee, Tea & Cocoa > Coffee > Whole Coffee Beans", (8, 45), "Medium Roast|Dark Roast|Arabica|Single Origin", "flavor name|food size"),
    _t("food", "Green Tea", "green tea|tea bags", "Beverages > Coffee, Tea & Cocoa > Tea > Green", (4, 25), "Loose Leaf|Japanese|Sencha|Tea Bags", "flavor name|food size"),
    _t("food", "Protein Bar", "protein bars|snack bars", "Snack Foods > Bars > Protein Bars", (12, 40), "20g Protein|Chewy|Crunchy|Meal Replacement", "flavor name|food size"),
    _t("food", "Trail Mix", "trail mix|nut mix", "Snack Foods > Trail Mix", (6, 30), "Roasted|Deluxe|Mixed Nuts|Energy", "flavor name|food size"),
    _t("food", "Dark Chocolate Bar", "dark chocolate|chocolate bar", "Snacks & Sweets > Chocolate > Bars", (5, 35), "85% Cocoa|Fair Trade|Bittersweet|Artisan", "flavor name|food size"),
    _t("food", "Olive Oil", "olive oil|extra virgin olive oil", "Pantry Staples > Cooking & Baking > Oils > Olive", (9, 50), "Extra Virgin|Cold Pressed|First Harvest|Italian", "food size"),
    _t("food", "Hot Sauce", "hot sauce|chili sauce", "Pantry Staples > Condiments & Salad Dressings > Hot Sauce", (4, 22), "Habanero|Chipotle|Sriracha|Small Batch", "flavor name|food size"),
    _t("food", "Beef Jerky", "beef jerky|meat snacks", "Snack Foods > Jerky & Dried Meats > Beef", (7, 38), "Teriyaki|Original|Peppered|Tender", "flavor name|food size"),
    _t("food", "Gummy Candy", "gummy candy|gummies", "Snacks & Sweets > Candy > Gummy Candy", (3, 20), "Sour|Fruit|Vegan|Party Size", "flavor name|food size"),
    _t("food", "Almond Butter", "almond butter|nut butter", "Pantry Staples > Jams, Jellies & Sweet Spreads > Nut Butters", (6, 28), "Creamy|Crunchy|Raw|Roasted", "food size"),
    _t("food", "Granola", "granola|breakfast cereal", "Breakfast Foods > Cereals > Granola", (5, 26), "Clusters|Ancient Grain|Honey Almond|Crunchy", "flavor name|food size"),
    _t("fashion", "Running Shoes", "running shoes|womens running shoes|mens running shoes", "Women > Shoes > Athletic > Running", (25, 140), "Lightweight|Breathable|Trail|Road", "color|shoe size"),
    _t("fashion", "Sneakers", "sneakers|casual sneakers", "Men > Shoes > Fashion Sneakers", (20, 120), "Canvas|Low Top|High Top|Slip On", "color|shoe size"),
    _t("fashion", "T-Shirt", "t shirt|graphic tee", "Men > Clothing > Shirts > T-Shirts", (8, 35), "Crew Neck|V-Neck|Cotton|Graphic", "color|apparel size"),
    _t("fashion", "Jeans", "jeans|denim jeans", "Women > Clothing > Jeans", (20, 80), "Skinny|Straight Leg|Bootcut|Stretch", "color|apparel size"),
    _t("fashion", "Hoodie", "hoodie|pullover hoodie", "Men > Clothing > Fashion Hoodies & Sweatshirts", (18, 65), "Fleece|Pullover|Zip Up|Oversized", "color|apparel size"),
    _t("fashion", "Dress", "dress|summer dress", "Women > Clothing > Dresses > Casual", (18, 75), "Floral|Maxi|Wrap|Midi", "color|apparel size"),
    _t("fashion", "Boots", "boots|ankle boots", "Women > Shoes > Boots > Ankle & Bootie", (30, 150), "Chelsea|Leather|Waterproof|Combat", "color|shoe size"),
    _t("fashion", "Leggings", "leggings|yoga pants", "Women > Clothing > Leggings", (12, 45), "Yoga|High Waisted|Workout|Tummy Control", "color|apparel size"),
    _t("fashion", "Rain Jacket", "rain jacket|windbreaker", "Men > Clothing > Jackets & Coats > Lightweight Jackets", (25, 110), "Waterproof|Hooded|Packable|Windproof", "color|apparel size"),
    _t("fashion", "Sandals", "sandals|slide sandals", "Women > Shoes > Sandals > Flat", (12, 60), "Slide|Flip Flop|Strappy|Platform", "color|shoe size"),
    _t("fashion", "Pajama Set", "pajama set|sleepwear", "Women > Clothing > Lingerie, Sleep & Lounge > Sleep & Lounge > Sets", (16, 55), "Button Down|Satin|Two Piece|Soft", "color|apparel size"),
    _t("furniture", "Office Chair", "office chair|desk chair", "Furniture > Home Office Furniture > Home Office Chairs > Home Office Desk Chairs", (60, 320), "Ergonomic|Mesh|Executive|Swivel", "color|style"),
    _t("furniture", "Bookshelf", "bookshelf|bookcase", "Furniture > Living Room Furniture > Bookcases", (40, 220), "Ladder|Open|Corner|Industrial", "color|furniture size"),
    _t("furniture", "Coffee Table", "coffee table|living room table", "Furniture > Living Room Furniture > Tables > Coffee Tables", (50, 300), "Lift Top|Round|Rustic|Glass", "color|style"),
    _t("furniture", "Bed Frame", "bed frame|platform bed", "Furniture > Bedroom Furniture > Beds, Frames & Bases > Beds", (90, 450), "Platform|Upholstered|Metal|Low Profile", "color|furniture size"),
    _t("furniture", "Nightstand", "nightstand|bedside table", "Furniture > Bedroom Furniture > Nightstands", (30, 160), "Bedside|Floating|with Charging Station|Small", "color|style"),
    _t("furniture", "TV Stand", "tv stand|entertainment center", "Furniture > Living Room Furniture > TV & Media Furniture > Television Stands & Entertainment Centers", (60, 350), "Media Console|Farmhouse|Low|Corner", "color|furniture size"),
    _t("furniture", "Bar Stool", "bar stools|counter stools", "Furniture > Game & Recreation Room Furniture > Home Bar Furniture > Barstools", (45, 260), "Counter Height|Swivel|Backless|Adjustable", "color|furniture size"),
    _t("furniture", "Area Rug", "area rug|living room rug", "Home Décor Products > Area Rugs, Runners & Pads > Area Rugs", (30, 280), "Shag|Vintage|Washable|Boho", "color|furniture size"),
    _t("furniture", "Shoe Rack", "shoe rack|shoe organizer", "Storage & Organization > Clothing & Closet Storage > Shoe Organizers > Free Standing Shoe Racks", (18, 90), "Stackable|Bamboo|Entryway|Metal", "color|furniture size"),
    _t("furniture", "Storage Ottoman", "storage ottoman|ottoman", "Furniture > Living Room Furniture > Ottomans", (35, 180), "Folding|Tufted|Cube|Velvet", "color|style"),
    _t("furniture", "Writing Desk", "computer desk|writing desk", "Furniture > Home Office Furniture > Home Office Desks", (60, 330), "Computer|Standing|L-Shaped|Compact", "color|furniture size"),
    _t("electronics", "Bluetooth Speaker", "bluetooth speaker|portable speaker", "Portable Audio & Video > Portable Speakers & Docks > Portable Bluetooth Speakers", (20, 150), "Portable|Waterproof|Outdoor|Bass Boost", "color|style"),
    _t("electronics", "Wireless Earbuds", "wireless earbuds|bluetooth earbuds", "Headphones, Earbuds & Accessories > Earbud Headphones", (15, 180), "True Wireless|Sport|In-Ear|with Charging Case", "color|style"),
    _t("electronics", "USB C Cable", "usb c cable|charging cable", "Computers & Accessories > Computer Accessories & Peripherals > Cables & Accessories > Cables > USB Cables", (5, 25), "Braided|Fast Charge|Type C|Data Sync", "color|cable size"),
    _t("electronics", "Phone Case", "phone case|iphone case", "Cell Phones & Accessories > Cases, Holsters & Sleeves > Basic Cases", (6, 40), "Slim|Shockproof|Clear|Protective", "color|style"),
    _t("electronics", "Power Bank", "power bank|portable charger", "Cell Phones & Accessories > Chargers & Power Adapters > Portable Power Banks", (15, 80), "Portable|Slim|Dual USB|PD", "color|capacity"),
    _t("electronics", "HDMI Cable", "hdmi cable|4k hdmi cable", "Television & Video > Accessories > Cables > HDMI Cables", (6, 30), "4K|High Speed|Braided|Ethernet", "cable size"),
    _t("electronics", "Wireless Mouse", "wireless mouse|computer mouse", "Computers & Accessories > Computer Accessories & Peripherals > Keyboards, Mice & Accessories > Mice", (8, 60), "Ergonomic|Silent|Rechargeable|Compact", "color|style"),
    _t("electronics", "Mechanical Keyboard", "mechanical keyboard|gaming keyboard", "Computers & Accessories > Computer Accessories & Peripherals > Keyboards, Mice & Accessories > Keyboards", (30, 160), "RGB|Tenkeyless|Hot Swappable|Wired", "color|style"),
    _t("electronics", "Laptop Stand", "laptop stand|laptop riser", "Computers & Accessories > Laptop Accessories > Lap Desks", (15, 70), "Adjustable|Foldable|Ventilated|Desktop", "color"),
    _t("electronics", "Webcam", "webcam|usb webcam", "Computers & Accessories > Computer Accessories & Peripherals > Audio & Video Accessories > Webcams", (20, 120), "1080P|with Microphone|Autofocus|Wide Angle", "style"),
    _t("electronics", "Memory Card", "memory card|micro sd card", "Computers & Accessories > Memory Cards > Micro SD Cards", (6, 45), "Micro SD|High Endurance|UHS-I|with Adapter", "capacity"),
    _t("electronics", "Over-Ear Headphones", "headphones|over ear headphones", "Headphones, Earbuds & Accessories > Headphones > Over-Ear Headphones", (25, 220), "Noise Cancelling|Foldable|Studio|Wireless", "color|style"),
)  # fmt: skip

BRAND_SYLLABLES = (
    "lu", "mo", "ra", "ve", "zen", "ko", "ta", "ri", "na", "vo", "sel", "dor", "ax", "qu", "fi",
    "be", "lo", "tri", "ga", "mi", "no", "pra", "sy", "el", "ion", "ka", "ver", "ou", "hal", "ne",
)  # fmt: skip

TITLE_EXTRAS = {
    "beauty": ("for Women and Men", "Gift Set", "Salon Quality", "Travel Friendly", "Value Pack"),
    "food": ("Gourmet", "Family Size", "Snack Pack", "Variety Pack", "Bulk"),
    "fashion": ("for Women", "for Men", "Unisex", "Casual", "Athletic"),
    "furniture": ("for Living Room", "for Bedroom", "for Small Spaces", "Home Office", "Entryway"),
    "electronics": ("Compatible with iPhone and Android", "for Laptop", "Gen 2", "2024", "Upgraded"),
}  # fmt: skip

INSTRUCTION_TEMPLATES = (
    "i want a {attrs} {noun}",
    "i am looking for a {attrs} {noun}",
    "i need {attrs} {noun}",
    "find me a {noun} that is {attrs}",
    "i'm looking for {attrs} {noun}",
    "i would like a {noun} that is {attrs}",
    "please find a {attrs} {noun}",
)

DESCRIPTION_SENTENCES = (
    "This {noun} from {brand} is made for everyday use and is {attr}.",
    "Designed with care, it offers {attr} performance you can rely on.",
    "Our {noun} combines {attr} design with {attr2} quality.",
    "Perfect as a gift for family and friends.",
    "Customers love how {attr} and {attr2} it is.",
    "Backed by a 30 day money back guarantee and friendly customer service.",
    "Each {noun} is inspected before shipping.",
)

BULLET_TEMPLATES = (
    "{ATTR}: {brand} {noun} is {attr} for worry-free use",
    "PREMIUM QUALITY - built to be {attr} and {attr2}",
    "WHAT YOU GET - one {noun}, user guide and our friendly support",
    "{ATTR} DESIGN - ideal for home, travel and gifting",
    "SATISFACTION GUARANTEED - contact us with any question about your {noun}",
)
