"""The fans (番种) of Chinese Official Mahjong, as data.

``Fan`` lists the 81 fans of the rule book in its order (highest value first),
plus Concealed Kong and Melded Kong (明暗杠, 5), which the MIL rules and the
reference calculators score for one concealed and one melded kong. Each member
carries its points, English name (MCR green book spelling) and Chinese name.

After them come the twelve fans marked ``*`` in document 000 (天和, 混三步,
季花, ...; ``Fan.starred``), which only a rule set with ``extra_fans`` scores.

Exclusions (不计) are the table ``engine.scoring.exclusions.EXCLUSIONS``, one
row per excluding fan with the rule book's words; the calculator applies it to
every reading.
"""

from __future__ import annotations

from enum import Enum


class Fan(Enum):
    """A fan: ``(points, English name, Chinese name)``; the member order is the rule book's."""

    points: int
    en: str
    zh: str

    def __new__(cls, points: int, en: str, zh: str) -> Fan:
        member = object.__new__(cls)
        member._value_ = en
        member.points = points
        member.en = en
        member.zh = zh
        return member

    # 88
    BIG_FOUR_WINDS = (88, "Big Four Winds", "大四喜")
    BIG_THREE_DRAGONS = (88, "Big Three Dragons", "大三元")
    ALL_GREEN = (88, "All Green", "绿一色")
    NINE_GATES = (88, "Nine Gates", "九莲宝灯")
    FOUR_KONGS = (88, "Four Kongs", "四杠")
    SEVEN_SHIFTED_PAIRS = (88, "Seven Shifted Pairs", "连七对")
    THIRTEEN_ORPHANS = (88, "Thirteen Orphans", "十三幺")
    # 64
    ALL_TERMINALS = (64, "All Terminals", "清幺九")
    LITTLE_FOUR_WINDS = (64, "Little Four Winds", "小四喜")
    LITTLE_THREE_DRAGONS = (64, "Little Three Dragons", "小三元")
    ALL_HONORS = (64, "All Honors", "字一色")
    FOUR_CONCEALED_PUNGS = (64, "Four Concealed Pungs", "四暗刻")
    PURE_TERMINAL_CHOWS = (64, "Pure Terminal Chows", "一色双龙会")
    # 48
    QUADRUPLE_CHOW = (48, "Quadruple Chow", "一色四同顺")
    FOUR_PURE_SHIFTED_PUNGS = (48, "Four Pure Shifted Pungs", "一色四节高")
    # 32
    FOUR_PURE_SHIFTED_CHOWS = (32, "Four Pure Shifted Chows", "一色四步高")
    THREE_KONGS = (32, "Three Kongs", "三杠")
    ALL_TERMINALS_AND_HONORS = (32, "All Terminals and Honors", "混幺九")
    # 24
    SEVEN_PAIRS = (24, "Seven Pairs", "七对")
    GREATER_HONORS_AND_KNITTED_TILES = (24, "Greater Honors and Knitted Tiles", "七星不靠")
    ALL_EVEN_PUNGS = (24, "All Even Pungs", "全双刻")
    FULL_FLUSH = (24, "Full Flush", "清一色")
    PURE_TRIPLE_CHOW = (24, "Pure Triple Chow", "一色三同顺")
    PURE_SHIFTED_PUNGS = (24, "Pure Shifted Pungs", "一色三节高")
    UPPER_TILES = (24, "Upper Tiles", "全大")
    MIDDLE_TILES = (24, "Middle Tiles", "全中")
    LOWER_TILES = (24, "Lower Tiles", "全小")
    # 16
    PURE_STRAIGHT = (16, "Pure Straight", "清龙")
    THREE_SUITED_TERMINAL_CHOWS = (16, "Three-Suited Terminal Chows", "三色双龙会")
    PURE_SHIFTED_CHOWS = (16, "Pure Shifted Chows", "一色三步高")
    ALL_FIVE = (16, "All Five", "全带五")
    TRIPLE_PUNG = (16, "Triple Pung", "三同刻")
    THREE_CONCEALED_PUNGS = (16, "Three Concealed Pungs", "三暗刻")
    # 12
    LESSER_HONORS_AND_KNITTED_TILES = (12, "Lesser Honors and Knitted Tiles", "全不靠")
    KNITTED_STRAIGHT = (12, "Knitted Straight", "组合龙")
    UPPER_FOUR = (12, "Upper Four", "大于五")
    LOWER_FOUR = (12, "Lower Four", "小于五")
    BIG_THREE_WINDS = (12, "Big Three Winds", "三风刻")
    # 8
    MIXED_STRAIGHT = (8, "Mixed Straight", "花龙")
    REVERSIBLE_TILES = (8, "Reversible Tiles", "推不倒")
    MIXED_TRIPLE_CHOW = (8, "Mixed Triple Chow", "三色三同顺")
    MIXED_SHIFTED_PUNGS = (8, "Mixed Shifted Pungs", "三色三节高")
    CHICKEN_HAND = (8, "Chicken Hand", "无番和")
    LAST_TILE_DRAW = (8, "Last Tile Draw", "妙手回春")
    LAST_TILE_CLAIM = (8, "Last Tile Claim", "海底捞月")
    OUT_WITH_REPLACEMENT_TILE = (8, "Out with Replacement Tile", "杠上开花")
    ROBBING_THE_KONG = (8, "Robbing The Kong", "抢杠和")
    # 6
    ALL_PUNGS = (6, "All Pungs", "碰碰和")
    HALF_FLUSH = (6, "Half Flush", "混一色")
    MIXED_SHIFTED_CHOWS = (6, "Mixed Shifted Chows", "三色三步高")
    ALL_TYPES = (6, "All Types", "五门齐")
    MELDED_HAND = (6, "Melded Hand", "全求人")
    TWO_CONCEALED_KONGS = (6, "Two Concealed Kongs", "双暗杠")
    TWO_DRAGONS_PUNGS = (6, "Two Dragons Pungs", "双箭刻")
    # 4
    OUTSIDE_HAND = (4, "Outside Hand", "全带幺")
    FULLY_CONCEALED_HAND = (4, "Fully Concealed Hand", "不求人")
    TWO_MELDED_KONGS = (4, "Two Melded Kongs", "双明杠")
    LAST_TILE = (4, "Last Tile", "和绝张")
    # 2
    DRAGON_PUNG = (2, "Dragon Pung", "箭刻")
    PREVALENT_WIND = (2, "Prevalent Wind", "圈风刻")
    SEAT_WIND = (2, "Seat Wind", "门风刻")
    CONCEALED_HAND = (2, "Concealed Hand", "门前清")
    ALL_CHOWS = (2, "All Chows", "平和")
    TILE_HOG = (2, "Tile Hog", "四归一")
    DOUBLE_PUNG = (2, "Double Pung", "双同刻")
    TWO_CONCEALED_PUNGS = (2, "Two Concealed Pungs", "双暗刻")
    CONCEALED_KONG = (2, "Concealed Kong", "暗杠")
    ALL_SIMPLES = (2, "All Simples", "断幺")
    # 1
    PURE_DOUBLE_CHOW = (1, "Pure Double Chow", "一般高")
    MIXED_DOUBLE_CHOW = (1, "Mixed Double Chow", "喜相逢")
    SHORT_STRAIGHT = (1, "Short Straight", "连六")
    TWO_TERMINAL_CHOWS = (1, "Two Terminal Chows", "老少副")
    PUNG_OF_TERMINALS_OR_HONORS = (1, "Pung of Terminals or Honors", "幺九刻")
    MELDED_KONG = (1, "Melded Kong", "明杠")
    ONE_VOIDED_SUIT = (1, "One Voided Suit", "缺一门")
    NO_HONORS = (1, "No Honors", "无字")
    EDGE_WAIT = (1, "Edge Wait", "边张")
    CLOSED_WAIT = (1, "Closed Wait", "坎张")
    SINGLE_WAIT = (1, "Single Wait", "单钓将")
    SELF_DRAWN = (1, "Self-Drawn", "自摸")
    FLOWER_TILES = (1, "Flower Tiles", "花牌")
    # MIL rules: one concealed and one melded kong
    CONCEALED_KONG_AND_MELDED_KONG = (5, "Concealed Kong and Melded Kong", "明暗杠")
    # The fans marked * in document 000, scored only by a rule set with ``extra_fans``
    # (the ``custom`` rule set); appended so that the MCR fans keep their order and ids.
    HEAVENLY_HAND = (168, "Heavenly Hand", "天和")
    EARTHLY_HAND = (158, "Earthly Hand", "地和")
    HUMAN_HAND = (108, "Human Hand", "人和")
    BIG_FOUR_WINDS_AND_GREEN_DRAGON = (168, "Big Four Winds and Green Dragon", "四方大发财")
    FOUR_WILDS = (88, "Four Wilds", "混杠")
    FOUR_MIXED_SUIT_SHIFTED_PUNGS = (6, "Four Mixed-Suit Shifted Pungs", "混四节")
    MIXED_SUIT_SHIFTED_PUNGS = (4, "Mixed-Suit Shifted Pungs", "混三节")
    FOUR_MIXED_SUIT_SHIFTED_CHOWS = (4, "Four Mixed-Suit Shifted Chows", "混四步")
    MIXED_SUIT_SHIFTED_CHOWS = (2, "Mixed-Suit Shifted Chows", "混三步")
    PAIR_OF_2_5_OR_8 = (1, "Pair of 2, 5 or 8", "二五八将")
    PAIR_OF_1_OR_9 = (1, "Pair of 1 or 9", "幺九头")
    SEAT_FLOWER = (1, "Seat Flower", "季花")

    @property
    def starred(self) -> bool:
        """A fan of document 000 that MCR does not have (marked * there)."""
        return FAN_ORDER[self] >= FAN_ORDER[Fan.HEAVENLY_HAND]

    @classmethod
    def by_name(cls, text: str) -> Fan:
        """Look a fan up by English name (any case) or Chinese name."""
        key = text.strip().casefold()
        for fan in cls:
            if key in (fan.en.casefold(), fan.zh):
                return fan
        raise KeyError(f"no fan named {text!r}")


FAN_ORDER: dict[Fan, int] = {fan: i for i, fan in enumerate(Fan)}
MCR_FANS: tuple[Fan, ...] = tuple(fan for fan in Fan if not fan.starred)
"""The 82 fans of MCR (the 81 of the rule book and 明暗杠), without the starred ones."""
STARRED_FANS: tuple[Fan, ...] = tuple(fan for fan in Fan if fan.starred)
