window.YTD.tweets.part0 = [
  {
    "tweet": {
      "edit_info": {
        "initial": {
          "editTweetIds": [
            "1780000000000000000"
          ],
          "editableUntil": "2024-05-01T07:00:00.000Z",
          "editsRemaining": "5",
          "isEditEligible": true
        }
      },
      "retweeted": false,
      "source": "<a href=\"https://example.com\" rel=\"nofollow\">Sample client</a>",
      "entities": {
        "hashtags": [
          {
            "text": "خبر_فوری",
            "indices": [
              "0",
              "9"
            ]
          }
        ],
        "symbols": [],
        "user_mentions": [],
        "urls": []
      },
      "display_text_range": [
        "0",
        "140"
      ],
      "favorite_count": "22",
      "id_str": "1780000000000000000",
      "truncated": false,
      "retweet_count": "8",
      "id": "1780000000000000000",
      "created_at": "Thu May 02 11:00:00 +0000 2024",
      "favorited": false,
      "full_text": "#خبر_فوری به نظر من این تصمیم درست نبود‌",
      "lang": "fa"
    }
  },
  {
    "tweet": {
      "edit_info": {
        "initial": {
          "editTweetIds": [
            "1780000000001000003"
          ],
          "editableUntil": "2024-05-01T07:00:00.000Z",
          "editsRemaining": "5",
          "isEditEligible": true
        }
      },
      "retweeted": false,
      "source": "<a href=\"https://example.com\" rel=\"nofollow\">Sample client</a>",
      "entities": {
        "hashtags": [
          {
            "text": "خبر_فوري",
            "indices": [
              "0",
              "9"
            ]
          }
        ],
        "symbols": [],
        "user_mentions": [],
        "urls": []
      },
      "display_text_range": [
        "0",
        "140"
      ],
      "favorite_count": "46",
      "id_str": "1780000000001000003",
      "truncated": false,
      "retweet_count": "8",
      "id": "1780000000001000003",
      "created_at": "Thu May 02 15:00:00 +0000 2024",
      "favorited": false,
      "full_text": "#خبر_فوري پیام‌های شما را خواندیم و پاسخ می‌دهیم",
      "lang": "fa"
    }
  },
  {
    "tweet": {
      "edit_info": {
        "initial": {
          "editTweetIds": [
            "1780000000002000006"
          ],
          "editableUntil": "2024-05-01T07:00:00.000Z",
          "editsRemaining": "5",
          "isEditEligible": true
        }
      },
      "retweeted": false,
      "source": "<a href=\"https://example.com\" rel=\"nofollow\">Sample client</a>",
      "entities": {
        "hashtags": [
          {
            "text": "اقتصاد",
            "indices": [
              "0",
              "7"
            ]
          }
        ],
        "symbols": [],
        "user_mentions": [],
        "urls": []
      },
      "display_text_range": [
        "0",
        "140"
      ],
      "favorite_count": "35",
      "id_str": "1780000000002000006",
      "truncated": false,
      "retweet_count": "3",
      "id": "1780000000002000006",
      "created_at": "Thu May 02 22:00:00 +0000 2024",
      "favorited": false,
      "full_text": "#اقتصاد خبــــر فوری: بارش برف در شمال کشور",
      "lang": "fa"
    }
  },
  {
    "tweet": {
      "edit_info": {
        "initial": {
          "editTweetIds": [
            "1780000000003000009"
          ],
          "editableUntil": "2024-05-01T07:00:00.000Z",
          "editsRemaining": "5",
          "isEditEligible": true
        }
      },
      "retweeted": false,
      "source": "<a href=\"https://example.com\" rel=\"nofollow\">Sample client</a>",
      "entities": {
        "hashtags": [
          {
            "text": "تهران",
            "indices": [
              "0",
              "6"
            ]
          }
        ],
        "symbols": [],
        "user_mentions": [
          {
            "name": "Sara",
            "screen_name": "sara_example",
            "indices": [
              "0",
              "13"
            ],
            "id_str": "9000",
            "id": "9000"
          }
        ],
        "urls": []
      },
      "display_text_range": [
        "0",
        "140"
      ],
      "favorite_count": "1",
      "id_str": "1780000000003000009",
      "truncated": false,
      "retweet_count": "1",
      "id": "1780000000003000009",
      "created_at": "Fri May 03 14:00:00 +0000 2024",
      "favorited": false,
      "full_text": "#تهران اين كتاب خيلي خوب است",
      "lang": "fa",
      "in_reply_to_status_id_str": "1780000000000000000",
      "in_reply_to_screen_name": "sara_example"
    }
  },
  {
    "tweet": {
      "edit_info": {
        "initial": {
          "editTweetIds": [
            "1780000000004000012"
          ],
          "editableUntil": "2024-05-01T07:00:00.000Z",
          "editsRemaining": "5",
          "isEditEligible": true
        }
      },
      "retweeted": false,
      "source": "<a href=\"https://example.com\" rel=\"nofollow\">Sample client</a>",
      "entities": {
        "hashtags": [
          {
            "text": "news",
            "indices": [
              "0",
              "5"
            ]
          }
        ],
        "symbols": [],
        "user_mentions": [],
        "urls": []
      },
      "display_text_range": [
        "0",
        "140"
      ],
      "favorite_count": "15",
      "id_str": "1780000000004000012",
      "truncated": false,
      "retweet_count": "0",
      "id": "1780000000004000012",
      "created_at": "Sat May 04 06:00:00 +0000 2024",
      "favorited": false,
      "full_text": "#news امروز گزارش تازه‌ای درباره بازار منتشر شد",
      "lang": "fa"
    }
  }
]
